package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rivo/uniseg"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers"
)

// ModelChoice is one configured model, for /model and /models.
type ModelChoice struct {
	// Ref is the model reference, "provider/model".
	Ref string
	// Provider is the provider's name; Default marks the configured
	// default_model.
	Provider string
	Default  bool
	// Note says more in a few words (context window, price).
	Note string
}

// listTimeout bounds asking a provider's /models endpoint.
const listTimeout = 8 * time.Second

// efforts are /effort's levels; "default" sends the provider's configured
// reasoning_effort.
var efforts = []string{"low", "medium", "high", "default"}

// cacheWarning is said on every model switch: the provider's prompt cache
// holds the prefix per model.
const cacheWarning = "the provider's prompt cache is per model: the next request sends the whole conversation uncached"

// idle reports whether nothing runs; otherwise it says so and returns
// false.
func (a *App) idle() bool {
	if a.cancel != nil {
		a.notef("still working on %s; this applies between turns: wait, or press Ctrl-C first", a.tr(a.workLabel))
		return false
	}
	return true
}

// models are the configured models.
func (a *App) models() []ModelChoice {
	if a.opts.Models == nil {
		return nil
	}
	return a.opts.Models()
}

// modelCommand is /model (a picker) and /model REF (switch now).
func (a *App) modelCommand(ref string) {
	if !a.idle() {
		return
	}
	if ref != "" {
		a.switchModel(ref)
		return
	}
	cur := a.eng.Model()
	var items []pickItem
	sel := 0
	for _, m := range a.models() {
		label := m.Ref
		if m.Ref == cur {
			sel = len(items)
			label = "● " + label
		} else {
			label = "  " + label
		}
		if m.Default {
			label += "  " + a.tr("(default)")
		}
		if m.Note != "" {
			label += "  " + m.Note
		}
		items = append(items, pickItem{label: label, value: m.Ref})
	}
	if len(items) == 0 {
		a.note("no models configured; /model PROVIDER/MODEL switches to one by name")
		return
	}
	a.pickAt(a.trf("model for the next request (now %s)", cur), items, sel, a.switchModel)
}

// switchModel switches the conversation's model.
func (a *App) switchModel(ref string) {
	before := a.eng.Model()
	key, err := a.eng.SetModel(ref)
	if err != nil {
		a.errorLine(err.Error())
		return
	}
	a.model = key
	a.updateStatus()
	if key == before {
		a.notef("the model is already %s", key)
		return
	}
	a.line(a.trf("[::b]model[::-] %s [gray]for the next request, saved in this session (--continue and /resume keep it)[-]", escape(key)))
	a.line("[yellow]" + a.tr("note:") + "[-] [gray]" + a.tr(cacheWarning) + "[-]")
}

// modelsCommand is /models: the configured models now, then what each
// provider's /models endpoint offers, fetched in the background.
func (a *App) modelsCommand() {
	list := a.models()
	if len(list) == 0 {
		a.note("no models configured")
		return
	}
	cur := a.eng.Model()
	var b strings.Builder
	b.WriteString(a.tr("[::b]configured models[::-] [gray](/model REF switches)[-]"))
	seen := map[string]bool{}
	var provs []string
	for _, m := range list {
		mark := "  "
		if m.Ref == cur {
			mark = "● "
		}
		fmt.Fprintf(&b, "\n  %s%s", mark, escape(m.Ref))
		if m.Default {
			b.WriteString(" [gray]" + a.tr("(default)") + "[-]")
		}
		if m.Note != "" {
			b.WriteString(" [gray]" + escape(m.Note) + "[-]")
		}
		if !seen[m.Provider] {
			seen[m.Provider] = true
			provs = append(provs, m.Provider)
		}
	}
	a.line(b.String())
	if a.opts.ProviderModels == nil {
		return
	}
	for _, p := range provs {
		a.background(func(ctx context.Context) {
			ctx, cancel := context.WithTimeout(ctx, listTimeout)
			defer cancel()
			ids, err := a.opts.ProviderModels(ctx, p)
			a.post(func() { a.offered(p, ids, err) })
		})
	}
	a.note("asking the providers which models they offer…")
}

// offered shows what provider p's /models endpoint listed.
func (a *App) offered(p string, ids []string, err error) {
	switch {
	case err != nil:
		a.notef("%s: no model list (%s)", p, oneLine(err.Error(), 160))
	case len(ids) == 0:
		a.notef("%s: the endpoint lists no models", p)
	default:
		sort.Strings(ids)
		shown := ids
		if len(shown) > 40 {
			shown = append(shown[:40:40], a.trf("… %d more", len(ids)-40))
		}
		a.line(a.trf("[::b]%s offers[::-] [gray](/model %s/NAME uses one)[-]", escape(p), escape(p)) + "\n  " +
			escape(strings.Join(shown, "  ")))
	}
}

// background runs f on a goroutine Run waits for; f's context ends when
// the UI does.
func (a *App) background(f func(ctx context.Context)) {
	a.side.Add(1)
	ctx := a.ctx
	a.goSafe(func() {
		defer a.side.Done()
		f(ctx)
	})
}

// effortCommand is /effort (a picker) and /effort LEVEL.
func (a *App) effortCommand(level string) {
	if !a.idle() {
		return
	}
	if level != "" {
		a.setEffort(level)
		return
	}
	cur := a.eng.Effort()
	if cur == "" {
		cur = "default"
	}
	var items []pickItem
	sel := 0
	for _, e := range efforts {
		label := "  " + e
		if e == cur {
			sel = len(items)
			label = "● " + e
		}
		if e == "default" {
			label += "  " + a.tr("(the provider's reasoning_effort from the config, or none)")
		}
		items = append(items, pickItem{label: label, value: e})
	}
	a.pickAt(a.tr("reasoning effort (sent as reasoning_effort)"), items, sel, a.setEffort)
}

func (a *App) setEffort(level string) {
	if err := a.eng.SetEffort(level); err != nil {
		a.errorLine(err.Error())
		return
	}
	a.updateStatus()
	a.line(a.trf("[::b]reasoning effort[::-] %s [gray]for the next request, saved in this session; sent as reasoning_effort, which reasoning models (OpenAI o-series, DeepSeek, Qwen) read and others may ignore or refuse[-]", escape(level)))
}

// modelCost is what one model cost this run.
type modelCost struct {
	requests int
	usage    providers.Usage
}

// countCost adds a request's usage to its model's. UI goroutine only.
func (a *App) countCost(e events.Event) {
	if e.Type != events.UsageUpdate || e.Usage == nil {
		return
	}
	m := e.Model
	if m == "" {
		m = a.tr("(unknown model)")
	}
	c := a.costs[m]
	if c == nil {
		c = &modelCost{}
		a.costs[m] = c
	}
	c.requests++
	c.usage.Add(*e.Usage)
}

// costCommand is /cost: tokens, cache hits and cost so far, per model.
func (a *App) costCommand() {
	var saved modelCost
	if se, ok := a.eng.(savedUsageEngine); ok {
		if u, n, err := se.SavedUsage(); err == nil {
			saved = modelCost{requests: n, usage: u}
		}
	}
	if len(a.costs) == 0 && saved.requests == 0 {
		a.note("no requests yet in this conversation")
		return
	}
	names := make([]string, 0, len(a.costs))
	for n := range a.costs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(a.tr("[::b]cost so far[::-] [gray](this conversation in this run; subagents and planner included)[-]"))
	w := max(uniseg.StringWidth(a.tr("conversation")), uniseg.StringWidth(a.tr("total")))
	for _, n := range names {
		w = max(w, uniseg.StringWidth(oneLine(n, 40)))
	}
	row := func(name string, c modelCost) {
		u := c.usage
		hit := 0
		if u.PromptTokens > 0 {
			hit = u.CacheHitTokens * 100 / u.PromptTokens
		}
		cost := a.tr("no price")
		if u.Cost > 0 || u.Currency != "" {
			cost = money(u.Cost, u.Currency)
		}
		name = oneLine(name, 40)
		b.WriteString("\n  " + escape(name) + strings.Repeat(" ", w-uniseg.StringWidth(name)) + "  ")
		b.WriteString(a.trf("%d req · %s in (%s cached, %d%%) · %s out · %s",
			c.requests, count(u.PromptTokens), count(u.CacheHitTokens), hit, count(u.CompletionTokens), cost))
	}
	var total modelCost
	for _, n := range names {
		c := a.costs[n]
		row(n, *c)
		total.requests += c.requests
		total.usage.Add(c.usage)
	}
	if len(names) > 1 {
		row(a.tr("total"), total)
	}
	if saved.requests > 0 {
		// Its file knows the runs it was resumed from too.
		b.WriteString("\n  [gray]" + a.tr("the conversation's own requests over every run (its session file):") + "[-]")
		row(a.tr("conversation"), saved)
	}
	a.line(b.String())
}

// savedUsageEngine is what an engine offers for the whole conversation's
// cost (orchestrator.Engine does).
type savedUsageEngine interface {
	SavedUsage() (providers.Usage, int, error)
}

// agentsCommand is /agents: the subagents the model can delegate to;
// choosing one puts a task hint naming it in the composer.
func (a *App) agentsCommand() {
	list := a.eng.Agents()
	if len(list) == 0 {
		a.note("no subagents installed (.claude/agents/*.md or .reasonix/agents/*.md add some)")
		return
	}
	a.pick(a.tr("subagents (Enter puts a task for one in the composer)"), describe(list), func(name string) {
		a.composer.SetText("Use the "+name+" agent to ", true)
	})
}

// skillsCommand is /skills: the skills, custom commands and MCP prompts;
// choosing one puts "/name " in the composer.
func (a *App) skillsCommand() {
	list := a.eng.Commands()
	if len(list) == 0 {
		a.note("no skills or custom commands installed (.claude/skills/NAME/SKILL.md, .claude/commands/NAME.md)")
		return
	}
	a.pick(a.tr("skills and commands (Enter puts /name in the composer)"), describe(list), func(name string) {
		a.composer.SetText("/"+name+" ", true)
	})
}

// describe is a picker line per command: name, where it came from, what
// it does, and its file.
func describe(list []events.Command) []pickItem {
	w := 0
	for _, c := range list {
		w = max(w, len(c.Name))
	}
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	var items []pickItem
	for _, c := range list {
		label := fmt.Sprintf("%-*s  %s", w, c.Name, c.Source)
		if d := oneLine(c.Description, 70); d != "" {
			label += " · " + d
		}
		if p := c.Path; p != "" {
			if rel, err := filepath.Rel(wd, p); err == nil && wd != "" && !strings.HasPrefix(rel, "..") {
				p = rel
			} else if home != "" && strings.HasPrefix(p, home+string(filepath.Separator)) {
				p = "~" + p[len(home):]
			}
			label += " · " + p
		}
		// A long row continues under the source and description, not
		// under the name.
		items = append(items, pickItem{label: label, value: c.Name, hang: w + 2})
	}
	return items
}

// postures are what Shift-Tab cycles through.
var postures = []string{"ask", "auto", "yolo"}

// posture is the gate's posture, or "" when the front end cannot tell.
func (a *App) posture() string {
	if a.opts.Posture == nil {
		return ""
	}
	return a.opts.Posture()
}

// cyclePosture is Shift-Tab: ask → auto → yolo → ask. Yolo is only set
// after the person confirms it.
func (a *App) cyclePosture() {
	if a.opts.SetPosture == nil {
		a.note("this front end cannot switch the permission posture")
		return
	}
	next := postures[0]
	for i, p := range postures {
		if p == a.posture() {
			next = postures[(i+1)%len(postures)]
		}
	}
	if next == "yolo" {
		a.confirm(a.tr("Switch to yolo? Every tool call runs without asking, except dangerous commands, deny rules and control files. Shift-Tab again goes back to ask."),
			func() { a.setPosture(next) })
		return
	}
	a.setPosture(next)
}

func (a *App) setPosture(p string) {
	if err := a.opts.SetPosture(p); err != nil {
		a.errorLine(err.Error())
		return
	}
	a.notef("posture %s: %s", p, a.tr(postureHelp(p)))
	a.updateStatus()
}

// postureHelp says what a posture does.
func postureHelp(p string) string {
	switch p {
	case "ask":
		return "tools that change something ask first, unless a rule allows them"
	case "auto":
		return "changes no rule mentions run without asking; ask and deny rules and dangerous commands still apply"
	case "yolo":
		return "everything runs without asking except denied calls, dangerous commands and control files"
	}
	return ""
}
