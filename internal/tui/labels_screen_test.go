package tui

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers/scripted"
)

// englishRun is three English words in a row: a sentence the Chinese UI
// left untranslated (names, paths and keys are single words).
var englishRun = regexp.MustCompile(`[A-Za-z]{2,}[ ,;:]+[a-z]{2,}[ ,;:]+[a-z]{2,}`)

// screenRows is the screen as text rows, wide characters' second cells
// left out, with the rows as cell runes for border checks.
func screenRows(cells [][]rune) []string {
	out := make([]string, len(cells))
	for i, r := range cells {
		out[i] = wide(r)
	}
	return out
}

// checkChinese fails on an English sentence anywhere on the screen.
func checkChinese(t *testing.T, what string, rows []string) {
	t.Helper()
	for _, r := range rows {
		if m := englishRun.FindString(r); m != "" {
			t.Errorf("%s: English %q in the Chinese UI:\n%s", what, m, strings.Join(rows, "\n"))
			return
		}
	}
}

// checkFrame fails unless the screen holds one bordered box ('╔' to '╝'
// or '┌' to '┘') whose side borders stand in their columns on every row:
// a wide character cut at the edge, or one that pushed the border out,
// breaks a side.
func checkFrame(t *testing.T, what string, cells [][]rune) {
	t.Helper()
	boxes := 0
	for _, set := range [][6]rune{{'╔', '╗', '║', '╚', '╝'}, {'┌', '┐', '│', '└', '┘'}} {
		for y, r := range cells {
			left := -1
			for x, c := range r {
				if c == set[0] {
					left = x
					break
				}
			}
			if left < 0 {
				continue
			}
			right := -1
			for x := left + 1; x < len(r); x++ {
				if r[x] == set[1] {
					right = x
					break
				}
			}
			if right < 0 {
				t.Errorf("%s: the box's top border is cut: %q", what, wide(r))
				return
			}
			boxes++
			for yy := y + 1; yy < len(cells); yy++ {
				row := cells[yy]
				if row[left] == set[3] {
					if row[right] != set[4] {
						t.Errorf("%s: the bottom border is broken: %q", what, wide(row))
					}
					break
				}
				if row[left] != set[2] || row[right] != set[2] {
					t.Errorf("%s: a side border is broken at row %d: %q\n%s", what, yy, wide(row), strings.Join(screenRows(cells), "\n"))
					return
				}
			}
		}
	}
	if boxes == 0 {
		t.Errorf("%s: no bordered box on the screen:\n%s", what, strings.Join(screenRows(cells), "\n"))
	}
}

// TestChinesePickersAt80Columns: with language zh, every picker of the
// TUI (/model, /effort, /resume, /rewind, the prompt search) and every
// listing and notice (/models, /cost, /agents, /skills, /context, /mcp,
// /hooks, /jobs, an unknown command, /new) is Chinese on an 80x24
// screen: no English sentence shows, and the pickers' borders stand
// straight around the wide characters.
func TestChinesePickersAt80Columns(t *testing.T) {
	state := t.TempDir()
	opts := Options{
		Models: func() []ModelChoice { return modelChoices },
		ProviderModels: func(context.Context, string) ([]string, error) {
			return nil, errors.New("HTTP 401")
		},
		MCP:        func() []string { return nil },
		Hooks:      func() []string { return nil },
		Posture:    func() string { return "ask" },
		SetPosture: func(string) error { return nil },
	}
	h := startLang(t, "zh", opts, func(rt *orchestrator.Runtime, hub *events.Hub) {
		twoModels(rt, hub)
		rt.StateDir = state
	}, scripted.Turn{Text: "第一个回答"}, scripted.Turn{Text: "第二个回答"})
	h.sim.SetSize(80, 24)
	h.postEvent(tcell.NewEventResize(80, 24))
	h.app.app.QueueUpdateDraw(func() { h.sim.Clear() })
	h.waitWide("向 Reasonix 提问", "就绪")

	send := func(text string) {
		h.typeText(text)
		h.key(tcell.KeyEnter)
	}
	// A first prompt wider than the /resume picker: its end is cut there
	// (and the border stays).
	send("你好，请把按钮改成绿色，并说明为什么这样做更好，顺便检查一下其他页面上的按钮颜色是否一致")
	h.waitWide("第一个回答", "就绪")
	send("再来一次")
	h.waitWide("第二个回答", "就绪")

	// data: the items are the installed agents' own English words.
	picker := func(cmd, what string, data bool, want ...string) {
		t.Helper()
		send(cmd)
		cells := h.waitWide(want...)
		rows := screenRows(cells)
		if !data {
			checkChinese(t, what, rows)
		}
		checkFrame(t, what, cells)
		h.key(tcell.KeyEscape)
		h.waitWide("向 Reasonix 提问")
	}
	picker("/model", "/model", false, "下一次请求的模型（当前 scripted/sim-model）", "（默认）", "↑/↓ 移动")
	picker("/effort", "/effort", false, "推理强度（以 reasoning_effort 发送）", "配置中该提供方的")
	picker("/rewind", "/rewind", false, "回退到该轮之前", "再来一次")
	h.key(tcell.KeyCtrlR)
	cells := h.waitWide("搜索历史提示", "搜索：")
	checkChinese(t, "Ctrl-R", screenRows(cells))
	checkFrame(t, "Ctrl-R", cells)
	h.key(tcell.KeyEscape)
	h.waitWide("向 Reasonix 提问")

	listing := func(cmd string, want ...string) {
		t.Helper()
		h.app.app.QueueUpdateDraw(func() { h.sim.Clear() })
		send(cmd)
		checkChinese(t, cmd, screenRows(h.waitWide(want...)))
	}
	listing("/models", "已配置的模型", "（/model REF 切换）", "scripted：无法获取模型列表（HTTP 401）")
	listing("/cost", "目前的费用", "次请求", "无价格")
	picker("/agents", "/agents", true, "子代理（Enter 在输入框中写入交给它的任务）", "explore")
	listing("/skills", "未安装技能或自定义命令")
	listing("/context", "上下文")
	listing("/mcp", "未配置 MCP 服务器")
	listing("/hooks", "未加载钩子")
	listing("/jobs", "没有后台任务")
	listing("/nosuch", "未知命令 /nosuch")
	listing("/plan", "用法：/plan TEXT")
	listing("/new", "新对话")
	picker("/resume", "/resume", false, "继续一个对话", "2 轮", "你好，请把按钮改成绿色")
	h.key(tcell.KeyBacktab)
	cells = h.waitWide("姿态 auto", "规则未提及的改动直接运行")
	checkChinese(t, "Shift-Tab", screenRows(cells))
	// Reasoning and a subagent's block.
	h.app.app.QueueUpdateDraw(func() { h.sim.Clear() })
	p := h.app.Publish
	p(events.Event{Type: events.ReasoningDelta, Session: "e-1", Role: "executor", Text: "先读解析器，再看测试。"})
	p(events.Event{Type: events.SessionStart, Session: "g-1", Parent: "e-1", Role: "explore", Title: "查找配置加载器", Text: "m"})
	tl := tool("c1", "grep", "Load", map[string]string{"pattern": "Load"})
	tl.Summary = "3 matches"
	p(events.Event{Type: events.ToolEnd, Session: "g-1", Parent: "e-1", Role: "explore", Tool: tl})
	checkChinese(t, "the live region", screenRows(h.waitWide("✻ 思考中…", "[explore: 查找配置加载器]", "运行", "1 次调用")))
	p(events.Event{Type: events.TextDelta, Session: "e-1", Role: "executor", Text: "好的。"})
	p(events.Event{Type: events.Done, Session: "g-1", Role: "explore"})
	checkChinese(t, "the blocks", screenRows(h.waitWide("▸ 思考了", "[explore: 查找配置加载器] 完成", "1 次调用")))
	// A notice naming the running work says it in Chinese too.
	h.app.post(func() {
		h.app.cancel, h.app.workStart, h.app.workLabel = func() {}, time.Now(), "chat"
		h.app.updateStatus()
	})
	h.waitWide("工作中…")
	send("/model")
	h.waitWide("仍在处理对话")
	h.app.post(func() { h.app.cancel = nil })
}

// simCells is the simulation screen as rows of cells' first runes.
func simCells(s *setupScreen, sim tcell.SimulationScreen) [][]rune {
	var rows [][]rune
	s.app.QueueUpdate(func() {
		cells, w, _ := sim.GetContents()
		for y := 0; y*w < len(cells); y++ {
			row := make([]rune, w)
			for x := range w {
				if c := cells[y*w+x]; len(c.Runes) > 0 {
					row[x] = c.Runes[0]
				}
			}
			rows = append(rows, row)
		}
	})
	return rows
}

// waitSetup waits until the setup screen shows every text of want (wide
// characters read as text; a text may wrap from one row's end to the next
// row's start) and returns its cells.
func waitSetup(t *testing.T, s *setupScreen, sim tcell.SimulationScreen, want ...string) [][]rune {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		cells := simCells(s, sim)
		rows := screenRows(cells)
		text := strings.Join(rows, "\n")
		var joined strings.Builder
		for _, r := range rows {
			joined.WriteString(strings.TrimRight(r, " "))
		}
		ok := true
		for _, w := range want {
			ok = ok && (strings.Contains(text, w) || strings.Contains(joined.String(), w))
		}
		if ok {
			return cells
		}
		if time.Now().After(deadline) {
			t.Fatalf("the setup screen never showed %q:\n%s", want, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestChineseSetupScreenAt80Columns: with language zh the first-run
// screen, with the real presets, and the missing-key screen are Chinese
// at 80x24: intro, key states, form labels, buttons, help and errors in
// full, no English sentence, straight borders.
func TestChineseSetupScreenAt80Columns(t *testing.T) {
	newSim := func() tcell.SimulationScreen {
		sim := tcell.NewSimulationScreen("UTF-8")
		if err := sim.Init(); err != nil {
			t.Fatal(err)
		}
		sim.SetSize(80, 24)
		return sim
	}
	sim := newSim()
	var presets []SetupPreset
	for _, p := range config.Presets() {
		presets = append(presets, SetupPreset{Name: p.Name, Label: p.Label, BaseURL: p.BaseURL, KeyEnv: p.KeyEnv,
			KeyFound: p.Name == "openai", Model: p.Default, SignUp: p.SignUp})
	}
	done := make(chan error, 1)
	s := newSetupScreen(SetupOptions{Screen: sim, Language: "zh_CN.UTF-8", Presets: presets,
		Test: func(context.Context, SetupChoice) ([]string, error) { return nil, errors.New("HTTP 401") },
		Save: func(SetupChoice) (string, error) { return "", errors.New("not reached") }})
	go func() {
		_, _, err := s.run(context.Background())
		done <- err
	}()
	check := func(what string, cells [][]rune) {
		t.Helper()
		checkChinese(t, what, screenRows(cells))
		checkFrame(t, what, cells)
	}
	check("the presets", waitSetup(t, s, sim, "欢迎使用 Reasonix", "环境中已有的密钥会直接使用", "可先看一段演示会话", "提供方",
		"$DEEPSEEK_API_KEY 未设置：下一步粘贴密钥", "已在 $OPENAI_API_KEY 中找到密钥", "本地服务器（vLLM、Ollama、llama.cpp）", "无需密钥"))
	sim.InjectKey(tcell.KeyHome, 0, tcell.ModNone) // DeepSeek, whose key is missing
	sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	check("the form", waitSetup(t, s, sim, "API 地址", "API 密钥", "模型", "测试并保存", "返回", "Tab 在字段间切换",
		"$DEEPSEEK_API_KEY 未设置。请粘贴密钥", "https://platform.deepseek.com/api_keys", "或留空并在启动前导出该变量。"))
	for range 3 {
		sim.InjectKey(tcell.KeyTab, 0, tcell.ModNone)
	}
	sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	check("a failed test", waitSetup(t, s, sim, "HTTP 401", "修改字段后重试，或按 Esc 选择其他提供方"))
	sim.InjectKey(tcell.KeyEscape, 0, tcell.ModNone)
	sim.InjectKey(tcell.KeyEnd, 0, tcell.ModNone) // the local server: no key
	sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	check("the local server's form", waitSetup(t, s, sim, "本地服务器（vLLM、Ollama、llama.cpp）", "模型留空则使用服务器列出的第一个。"))
	sim.InjectKey(tcell.KeyCtrlC, 0, tcell.ModNone)
	if err := <-done; !errors.Is(err, ErrSetupCancelled) {
		t.Fatalf("Ctrl-C: %v", err)
	}

	// The screen that asks for one configured provider's missing key.
	sim = newSim()
	s = newSetupScreen(SetupOptions{Screen: sim, Language: "zh", Presets: []SetupPreset{{Name: "sim", Label: "sim · sim-model",
		BaseURL: "http://127.0.0.1:1/v1", KeyEnv: "SIM_KEY", Model: "sim-model", KeyOnly: true}},
		Test: func(context.Context, SetupChoice) ([]string, error) { return nil, errors.New("not reached") }})
	go func() {
		_, _, err := s.run(context.Background())
		done <- err
	}()
	check("the missing key", waitSetup(t, s, sim, "缺少 sim 的密钥", "都没有设置 $SIM_KEY", "粘贴密钥即可保存到凭据存储"))
	sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	waitSetup(t, s, sim, "API 密钥", "或按 Ctrl-C 退出后导出该变量。")
	sim.InjectKey(tcell.KeyTab, 0, tcell.ModNone)
	sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	check("an empty key", waitSetup(t, s, sim, "请粘贴密钥，或退出后导出 SIM_KEY"))
	sim.InjectKey(tcell.KeyCtrlC, 0, tcell.ModNone)
	if err := <-done; !errors.Is(err, ErrSetupCancelled) {
		t.Fatalf("Ctrl-C: %v", err)
	}
}
