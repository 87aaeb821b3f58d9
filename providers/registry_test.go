package providers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

type fakeProvider struct{ name string }

func (f fakeProvider) Name() string { return f.name }
func (fakeProvider) Stream(context.Context, Request) (<-chan Chunk, error) {
	return nil, errors.New("not implemented")
}

// withKinds swaps the init-time registry for the test's own, so tests see
// exactly the kinds they registered and leave nothing behind.
func withKinds(t *testing.T) {
	t.Helper()
	saved := factories
	factories = nil
	t.Cleanup(func() { factories = saved })
}

func TestRegisterNewKinds(t *testing.T) {
	withKinds(t)
	if got := Kinds(); len(got) != 0 {
		t.Fatalf("empty registry lists %v", got)
	}
	var gotCfg Config
	Register("zeta", func(cfg Config) (Provider, error) { return nil, errors.New("zeta broken") })
	Register("openai", func(cfg Config) (Provider, error) { gotCfg = cfg; return fakeProvider{cfg.Name}, nil })
	Register("alpha", func(cfg Config) (Provider, error) { return fakeProvider{"alpha:" + cfg.Name}, nil })
	if got, want := Kinds(), []string{"alpha", "openai", "zeta"}; !slices.Equal(got, want) {
		t.Fatalf("Kinds() = %v, want sorted %v", got, want)
	}

	cases := []struct {
		name     string
		cfg      Config
		wantName string
		wantErr  string
	}{
		{name: "empty kind means openai", cfg: Config{Name: "ds", BaseURL: "u"}, wantName: "ds"},
		{name: "explicit kind", cfg: Config{Name: "x", Kind: "alpha"}, wantName: "alpha:x"},
		{name: "factory error passes through", cfg: Config{Name: "z", Kind: "zeta"}, wantErr: "zeta broken"},
		{name: "unknown kind lists known kinds", cfg: Config{Name: "q", Kind: "nope"}, wantErr: `provider "q": unknown kind "nope" (known: alpha, openai, zeta)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := New(c.cfg)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != c.wantName {
				t.Fatalf("provider %q, want %q", p.Name(), c.wantName)
			}
		})
	}
	// The factory receives the config as given, Kind included.
	if gotCfg.Name != "ds" || gotCfg.BaseURL != "u" {
		t.Fatalf("factory got %+v", gotCfg)
	}

	// Registering a kind again replaces its factory.
	Register("alpha", func(cfg Config) (Provider, error) { return fakeProvider{"alpha2"}, nil })
	if p, err := New(Config{Kind: "alpha"}); err != nil || p.Name() != "alpha2" {
		t.Fatalf("re-register: %v %v", p, err)
	}
}

func TestResolve(t *testing.T) {
	cfgs := []Config{
		{Name: "deepseek", Models: []string{"deepseek-chat", "deepseek-reasoner"}, DefaultModel: "deepseek-chat"},
		{Name: "local", Models: []string{"qwen3", "Qwen/Qwen3-32B"}},
		{Name: "bare", DefaultModel: "only-default"},
		{Name: "empty"},
		// A provider named like another provider's model: the provider
		// name wins, because names are checked first.
		{Name: "qwen3", Models: []string{"q3-big"}},
	}
	cases := []struct {
		name      string
		ref, def  string
		cfgs      []Config
		wantProv  string
		wantModel string
		wantErr   string
	}{
		{name: "provider name uses its default model", ref: "deepseek", wantProv: "deepseek", wantModel: "deepseek-chat"},
		{name: "provider name without default uses first model", ref: "local", wantProv: "local", wantModel: "qwen3"},
		{name: "provider with only a default", ref: "bare", wantProv: "bare", wantModel: "only-default"},
		{name: "provider name without any model", ref: "empty", wantErr: `provider "empty" has no model configured`},
		{name: "bare model", ref: "deepseek-reasoner", wantProv: "deepseek", wantModel: "deepseek-reasoner"},
		{name: "bare default model not in list", ref: "only-default", wantProv: "bare", wantModel: "only-default"},
		{name: "bare model containing a slash", ref: "Qwen/Qwen3-32B", wantProv: "local", wantModel: "Qwen/Qwen3-32B"},
		{name: "provider/model", ref: "local/qwen3", wantProv: "local", wantModel: "qwen3"},
		{name: "provider/model not in list is passed through", ref: "deepseek/deepseek-v9", wantProv: "deepseek", wantModel: "deepseek-v9"},
		{name: "provider/model keeps later slashes", ref: "local/Qwen/Qwen3-32B", wantProv: "local", wantModel: "Qwen/Qwen3-32B"},
		{name: "provider/ without model", ref: "deepseek/", wantErr: `"deepseek/" names no model`},
		{name: "provider name beats model name", ref: "qwen3", wantProv: "qwen3", wantModel: "q3-big"},
		{name: "empty ref uses def", def: "local/qwen3", wantProv: "local", wantModel: "qwen3"},
		{name: "ref beats def", ref: "deepseek", def: "local", wantProv: "deepseek", wantModel: "deepseek-chat"},
		{name: "empty ref and def use the first provider", wantProv: "deepseek", wantModel: "deepseek-chat"},
		{name: "unknown model", ref: "gpt-9", wantErr: `model "gpt-9" not found: not a provider (deepseek, local, bare, empty, qwen3)`},
		{name: "unknown provider/model", ref: "nope/x", wantErr: `model "nope/x" not found`},
		{name: "unknown def", def: "gpt-9", wantErr: `model "gpt-9" not found`},
		{name: "leading slash is not a provider", ref: "/qwen3", wantErr: `model "/qwen3" not found`},
		{name: "no providers", ref: "deepseek", cfgs: []Config{}, wantErr: "no provider configured"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := cfgs
			if c.cfgs != nil {
				in = c.cfgs
			}
			got, model, err := Resolve(c.ref, in, c.def)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q (got %q %q)", err, c.wantErr, got.Name, model)
				}
				if got.Name != "" || model != "" {
					t.Fatalf("error with a result: %q %q", got.Name, model)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != c.wantProv || model != c.wantModel {
				t.Fatalf("got %s/%s, want %s/%s", got.Name, model, c.wantProv, c.wantModel)
			}
		})
	}
}
