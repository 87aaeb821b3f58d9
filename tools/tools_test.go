package tools

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLexicalResolve(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ws")
	env := NewEnv(root)
	cases := []struct {
		in      string
		want    string // relative to root; "" with wantErr
		wantErr string
	}{
		{in: "main.go", want: "main.go"},
		{in: "a/b/../c.go", want: "a/c.go"},
		{in: "./a//b/", want: "a/b"},
		{in: ".", want: "."},
		{in: "..foo", want: "..foo"}, // a name starting with dots is not a parent
		{in: "a/..", want: "."},
		{in: filepath.Join(root, "x", "y.go"), want: "x/y.go"},
		{in: root, want: "."},
		{in: "..", wantErr: "outside the workspace"},
		{in: "../x", wantErr: "outside the workspace"},
		{in: "a/../../x", wantErr: "outside the workspace"},
		{in: "a/b/../../../etc/passwd", wantErr: "outside the workspace"},
		{in: "/etc/passwd", wantErr: "outside the workspace"},
		{in: filepath.Dir(root), wantErr: "outside the workspace"},
		{in: root + "2/x", wantErr: "outside the workspace"}, // sibling sharing a prefix
		{in: filepath.Join(root, "..", "ws-other"), wantErr: "outside the workspace"},
		{in: "", wantErr: "path is empty"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			for _, write := range []bool{false, true} {
				got, err := env.Resolve(c.in, write)
				if c.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), c.wantErr) {
						t.Fatalf("Resolve(%q) = %q, %v; want error %q", c.in, got, err, c.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if want := filepath.Join(root, filepath.FromSlash(c.want)); got != want {
					t.Fatalf("Resolve(%q) = %q, want %q", c.in, got, want)
				}
			}
		})
	}
}

type recordingGuard struct {
	calls []string
}

func (g *recordingGuard) Resolve(p string, write bool) (string, error) {
	g.calls = append(g.calls, fmt.Sprintf("%s:%v", p, write))
	if p == "deny" {
		return "", errors.New("denied by guard")
	}
	return "/guarded/" + p, nil
}

func TestResolveUsesGuard(t *testing.T) {
	g := &recordingGuard{}
	env := &Env{Root: "/ws", Guard: g}
	// The guard decides alone: a path the lexical check would refuse
	// passes, and one it would accept can be refused.
	if got, err := env.Resolve("../outside", true); err != nil || got != "/guarded/../outside" {
		t.Fatalf("got %q %v", got, err)
	}
	if _, err := env.Resolve("deny", false); err == nil || err.Error() != "denied by guard" {
		t.Fatalf("err %v", err)
	}
	if want := []string{"../outside:true", "deny:false"}; fmt.Sprint(g.calls) != fmt.Sprint(want) {
		t.Fatalf("guard calls %v want %v", g.calls, want)
	}
}

func TestLimit(t *testing.T) {
	for _, c := range []struct{ set, want int }{{0, 30000}, {-5, 30000}, {1, 1}, {4096, 4096}} {
		if got := (&Env{OutputLimit: c.set}).Limit(); got != c.want {
			t.Errorf("OutputLimit %d: Limit() = %d, want %d", c.set, got, c.want)
		}
	}
}

func TestForkIsolatesState(t *testing.T) {
	parent := NewEnv("/ws")
	parent.OutputLimit = 123
	parent.Guard = &recordingGuard{}
	parent.Reads.Add("/ws/a.go")
	parent.State.Set("todos", []string{"one"})

	child := parent.Fork()
	if child == parent || child.Reads == parent.Reads || child.State == parent.State {
		t.Fatal("Fork shares per-session state")
	}
	if child.Root != "/ws" || child.OutputLimit != 123 || child.Guard != parent.Guard {
		t.Fatalf("Fork lost configuration: %+v", child)
	}
	// The child starts fresh: a file the parent read is unseen here, so
	// write_file in the child still demands a read first.
	if child.Reads.Has("/ws/a.go") || child.State.Get("todos") != nil {
		t.Fatal("child inherited parent state")
	}
	child.Reads.Add("/ws/b.go")
	child.State.Set("todos", "child")
	if parent.Reads.Has("/ws/b.go") || fmt.Sprint(parent.State.Get("todos")) != "[one]" {
		t.Fatal("child state leaked into parent")
	}
	child.OutputLimit = 1
	if parent.OutputLimit != 123 {
		t.Fatal("Fork returned an alias")
	}
}

func TestReadSetAndStateNilAndZero(t *testing.T) {
	// Nil receivers are inert so tools work with a bare Env{}.
	var rs *ReadSet
	rs.Add("/x")
	if rs.Has("/x") {
		t.Fatal("nil ReadSet remembered")
	}
	var st *State
	st.Set("k", 1)
	if st.Get("k") != nil {
		t.Fatal("nil State remembered")
	}
	// Zero values are usable.
	var rs2 ReadSet
	if rs2.Has("/x") {
		t.Fatal("zero ReadSet has /x")
	}
	rs2.Add("/x")
	if !rs2.Has("/x") || rs2.Has("/y") {
		t.Fatal("ReadSet membership wrong")
	}
	var st2 State
	st2.Set("k", 1)
	st2.Set("k", 2)
	if st2.Get("k") != 2 || st2.Get("other") != nil {
		t.Fatalf("State get %v", st2.Get("k"))
	}
}

// Read-only calls run in parallel and share one Env; run under -race.
func TestReadSetAndStateConcurrent(t *testing.T) {
	env := NewEnv("/ws")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p := fmt.Sprintf("/ws/%d/%d", w, i)
				env.Reads.Add(p)
				if !env.Reads.Has(p) {
					t.Errorf("lost %s", p)
				}
				env.State.Set(p, i)
				_ = env.State.Get(p)
			}
		}()
	}
	wg.Wait()
	for w := range 8 {
		if !env.Reads.Has(fmt.Sprintf("/ws/%d/199", w)) || env.State.Get(fmt.Sprintf("/ws/%d/199", w)) != 199 {
			t.Fatalf("worker %d state missing", w)
		}
	}
}

func TestDecodeArgs(t *testing.T) {
	type args struct {
		Path  string `json:"path"`
		Limit int    `json:"limit"`
	}
	cases := []struct {
		name    string
		raw     string
		want    args
		wantErr bool
	}{
		{name: "object", raw: `{"path":"a.go","limit":3}`, want: args{"a.go", 3}},
		{name: "empty means {}", raw: ``},
		{name: "whitespace means {}", raw: " \n\t"},
		{name: "null leaves defaults", raw: `null`},
		{name: "unknown fields ignored", raw: `{"path":"x","extra":true}`, want: args{Path: "x"}},
		{name: "wrong type", raw: `{"limit":"ten"}`, wantErr: true},
		{name: "not an object", raw: `["a.go"]`, wantErr: true},
		{name: "broken JSON", raw: `{"path":`, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got args
			err := DecodeArgs([]byte(c.raw), &got)
			if c.wantErr {
				// The message tells the model what to do next.
				if err == nil || !strings.HasPrefix(err.Error(), "invalid arguments: ") || !strings.Contains(err.Error(), "send a JSON object matching the tool schema") {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("got %+v want %+v", got, c.want)
			}
		})
	}
}

func TestAllowAll(t *testing.T) {
	if v := (AllowAll{}).Authorize(t.Context(), Invocation{}); !v.Allow {
		t.Fatalf("AllowAll denied: %+v", v)
	}
}
