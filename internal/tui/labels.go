package tui

import (
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/internal/lazy"
)

// SetLanguage picks the language of the UI's own words (the welcome
// line, the status line, the overlays, the pickers, the command menu,
// /help and the UI's notices): "zh" (or zh-CN, zh_TW, …) shows them in
// Chinese, anything else in English. What the model writes, and what
// tools and the engine report, is shown as it comes. Call it before Run.
func (a *App) SetLanguage(tag string) {
	a.zh = isChinese(tag)
	a.composer.SetPlaceholder(a.tr(composerPlaceholder))
}

// isChinese reports whether a language tag ("zh", "zh_CN", "zh-TW", …)
// is Chinese.
func isChinese(tag string) bool {
	base, _, _ := strings.Cut(strings.ToLower(strings.ReplaceAll(tag, "_", "-")), "-")
	return base == "zh"
}

// translate is the label s (its English text) in Chinese when zh, else
// s; a label without a translation stays English.
func translate(zh bool, s string) string {
	if !zh {
		return s
	}
	if t, ok := zhLabels.Get()[s]; ok {
		return t
	}
	return s
}

// tr is the label s (its English text) in the UI's language.
func (a *App) tr(s string) string { return translate(a.zh, s) }

// trf formats args with the format's label in the UI's language.
func (a *App) trf(format string, args ...any) string {
	return fmt.Sprintf(a.tr(format), args...)
}

// notef is a notice formatted with the format's label in the UI's
// language.
func (a *App) notef(format string, args ...any) {
	a.line("[gray]" + escape(a.trf(format, args...)) + "[-]")
}

// errorLine shows an error's text after the "error:" label.
func (a *App) errorLine(msg string) {
	a.line("[red]" + a.tr("error:") + "[-] " + escape(msg))
}

// helpFor is /help's text in the UI's language.
func (a *App) helpFor() string {
	if a.zh {
		return helpTextZh
	}
	return helpText
}

// zhLabels are the Chinese labels by their English text, built on first
// use (an English UI never pays for them).
var zhLabels = lazy.Value[map[string]string]{Build: func() map[string]string {
	return map[string]string{
		// Welcome line and status line.
		"Enter sends · Ctrl-J or Alt-Enter newline · /help · Ctrl-C cancels · Ctrl-D quits": "Enter 发送 · Ctrl-J 或 Alt-Enter 换行 · /help · Ctrl-C 取消 · Ctrl-D 退出",
		"a saved goal is active:":                  "有一个进行中的目标：",
		"(/goal shows it, /goal clear forgets it)": "（/goal 查看，/goal clear 清除）",
		"ready":                           "就绪",
		"working…":                        "工作中…",
		"Ctrl-C cancels":                  "Ctrl-C 取消",
		"thinking":                        "思考中",
		"plan mode":                       "计划模式",
		"plan":                            "计划",
		"queued":                          "条排队",
		"tokens %s in (%s cached) %s out": "令牌 输入 %s（缓存 %s）输出 %s",
		"cache %d%%":                      "缓存 %d%%",
		"context %s/%s (%d%%)":            "上下文 %s/%s（%d%%）",
		"ctx %d%%":                        "上下文 %d%%",
		"↓ new output below (End)":        "↓ 下方有新输出（End）",
		"↓ new below":                     "↓ 有新输出",
		// Approval overlay.
		"approve %s?":                           "批准 %s？",
		"DANGEROUS":                             "危险",
		"this answer covers this one call only": "此回答只适用于这一次调用",
		"tool":                                  "工具",
		"step":                                  "步骤",
		"asked by":                              "请求方",
		"command":                               "命令",
		"subject":                               "对象",
		"reason":                                "原因",
		"impact":                                "影响",
		"always":                                "始终",
		"saves %s to this project's reasonix.toml": "将 %s 保存到本项目的 reasonix.toml",
		"[::b]y[::-]/1 allow once":                 "[::b]y[::-]/1 允许一次",
		"[::b]s[::-]/2 this session":               "[::b]s[::-]/2 本会话内允许",
		"[::b]a[::-]/3 always":                     "[::b]a[::-]/3 始终允许",
		"[::b]n[::-]/4/Esc deny":                   "[::b]n[::-]/4/Esc 拒绝",
		"[::b]y[::-] once":                         "[::b]y[::-] 一次",
		"[::b]s[::-] session":                      "[::b]s[::-] 本会话",
		"[::b]a[::-] always":                       "[::b]a[::-] 始终",
		"[::b]n[::-]/Esc deny":                     "[::b]n[::-]/Esc 拒绝",
		"(plan workers ask one at a time)":         "（计划执行者逐个询问）",
		"%d more waiting":                          "还有 %d 个等待中",
		"[::b]a[::-] approve  [::b]e[::-] edit  [::b]r[::-]/Esc reject": "[::b]a[::-] 批准  [::b]e[::-] 编辑  [::b]r[::-]/Esc 拒绝",
		"the plan was not changed":                                      "计划未改动",
		"run this plan?":                                                "执行此计划？",
		"confirm":                                                       "确认",
		"[::b]y[::-] yes  [::b]n[::-]/Esc no":                           "[::b]y[::-] 是  [::b]n[::-]/Esc 否",
		"Enter answers (a number picks a choice) · Esc skips":           "Enter 回答（输入数字选择选项）· Esc 跳过",
		"question":      "提问",
		"step %s asks:": "步骤 %s 提问：",
		"the %s asks:":  "%s 提问：",
		// An MCP server's request for input.
		"MCP server %s asks:": "MCP 服务器 %s 请求：",
		"Do not enter passwords, API keys or other secrets: servers may not ask for them in a form.": "不要填写密码、API 密钥或其他机密：服务器不得通过表单索要这些信息。",
		"Tab next field · ↓ opens a list · Space ticks · Enter submits · Esc cancels":                "Tab 下一项 · ↓ 打开列表 · 空格 勾选 · Enter 提交 · Esc 取消",
		"Tab next field · Enter submits · Esc cancels":                                               "Tab 下一项 · Enter 提交 · Esc 取消",
		"the last answer was refused: %s":                                                            "上次的回答未被接受：%s",
		"Submit":                                                                                     "提交",
		"Decline":                                                                                    "拒绝",
		"Cancel":                                                                                     "取消",
		"input for MCP server %s":                                                                    "MCP 服务器 %s 请求输入",
		"(none)":                                                                                     "（不选）",
		"must be a number":                                                                           "必须是数字",
		"It asks you to open this address in your browser:":                                          "它请你在浏览器中打开这个地址：",
		"site": "站点",
		"What you enter there goes to that site, not through Reasonix.": "你在那里填写的内容直接交给该站点，不经过 Reasonix。",
		"request for input: %s":   "输入请求：%s",
		"open %s in your browser": "请在浏览器中打开 %s",
		"opening %s in the browser (if it does not open, visit it yourself)":         "正在浏览器中打开 %s（如未打开，请自行访问）",
		"[::b]o[::-] open in the browser  [::b]d[::-] decline  [::b]Esc[::-] cancel": "[::b]o[::-] 在浏览器中打开  [::b]d[::-] 拒绝  [::b]Esc[::-] 取消",
		"the site's name uses letters that can imitate another site's":               "站点名称含有可冒充其他站点的字符",
		"the address is not encrypted (http)":                                        "该地址未加密（http）",
		"Careful: ":                                                                  "注意：",
		// Command menu.
		"work on a goal over several turns":          "跨多轮持续完成一个目标",
		"plan read-only, then run the approved plan": "只读规划，批准后执行计划",
		"write AGENTS.md for this project":           "为本项目编写 AGENTS.md",
		"switch the model of the next request":       "切换下一次请求的模型",
		"list the configured and offered models":     "列出已配置和可用的模型",
		"reasoning effort: low, medium, high":        "推理强度：low、medium、high",
		"tokens, cache hits and cost per model":      "各模型的令牌、缓存命中和费用",
		"the installed subagents":                    "已安装的子代理",
		"the installed skills and commands":          "已安装的技能和命令",
		"start a new conversation":                   "开始新对话",
		"start a new conversation, after asking":     "确认后开始新对话",
		"go on with an earlier conversation":         "继续之前的对话",
		"go back to before a turn":                   "回到某一轮之前",
		"compact the context now":                    "立即压缩上下文",
		"how full the context is":                    "上下文的占用情况",
		"the loaded hooks":                           "已加载的钩子",
		"the MCP servers":                            "MCP 服务器",
		"the background jobs":                        "后台任务",
		"commands and keys":                          "命令和按键",
		"leave":                                      "退出",
		"commands and skills":                        "命令和技能",
		// Pickers and what they show: /model, /models, /effort, /cost,
		// /agents, /skills, /resume, /rewind, /context, /mcp, /hooks,
		// /jobs.
		"[::b]↑/↓[::-] move  [::b]Enter[::-] choose  [::b]Esc[::-] close":     "[::b]↑/↓[::-] 移动  [::b]Enter[::-] 选择  [::b]Esc[::-] 关闭",
		"model for the next request (now %s)":                                 "下一次请求的模型（当前 %s）",
		"(default)":                                                           "（默认）",
		"no models configured; /model PROVIDER/MODEL switches to one by name": "未配置模型；/model PROVIDER/MODEL 可按名称切换",
		"the model is already %s":                                             "模型已经是 %s",
		"[::b]model[::-] %s [gray]for the next request, saved in this session (--continue and /resume keep it)[-]": "[::b]模型[::-] %s [gray]用于下一次请求，已保存到本会话（--continue 和 /resume 会沿用）[-]",
		"note:": "注意：",
		"the provider's prompt cache is per model: the next request sends the whole conversation uncached": "提供方的提示缓存按模型区分：下一次请求会发送整段对话，不命中缓存",
		"no models configured": "未配置模型",
		"[::b]configured models[::-] [gray](/model REF switches)[-]": "[::b]已配置的模型[::-][gray]（/model REF 切换）[-]",
		"asking the providers which models they offer…":              "正在向各提供方查询可用模型…",
		"%s: no model list (%s)":                                     "%s：无法获取模型列表（%s）",
		"%s: the endpoint lists no models":                           "%s：该接口没有列出任何模型",
		"… %d more":                                                  "… 还有 %d 个",
		"[::b]%s offers[::-] [gray](/model %s/NAME uses one)[-]":     "[::b]%s 提供[::-][gray]（/model %s/NAME 使用其中之一）[-]",
		"(the provider's reasoning_effort from the config, or none)": "（配置中该提供方的 reasoning_effort，未配置则不发送）",
		"reasoning effort (sent as reasoning_effort)":                "推理强度（以 reasoning_effort 发送）",
		"[::b]reasoning effort[::-] %s [gray]for the next request, saved in this session; sent as reasoning_effort, which reasoning models (OpenAI o-series, DeepSeek, Qwen) read and others may ignore or refuse[-]": "[::b]推理强度[::-] %s [gray]用于下一次请求，已保存到本会话；以 reasoning_effort 发送，推理模型（OpenAI o 系列、DeepSeek、Qwen）会读取，其他模型可能忽略或拒绝[-]",
		"no requests yet in this conversation": "本对话还没有请求",
		"[::b]cost so far[::-] [gray](this conversation in this run; subagents and planner included)[-]": "[::b]目前的费用[::-][gray]（本次运行中的本对话，含子代理和规划器）[-]",
		"%d req · %s in (%s cached, %d%%) · %s out · %s":                                                 "%d 次请求 · 输入 %s（缓存 %s，%d%%）· 输出 %s · %s",
		"no price":     "无价格",
		"total":        "合计",
		"conversation": "整个对话",
		"the conversation's own requests over every run (its session file):":                              "本对话在所有运行中的请求（来自其会话文件）：",
		"no subagents installed (.claude/agents/*.md or .reasonix/agents/*.md add some)":                  "未安装子代理（可在 .claude/agents/*.md 或 .reasonix/agents/*.md 中添加）",
		"subagents (Enter puts a task for one in the composer)":                                           "子代理（Enter 在输入框中写入交给它的任务）",
		"no skills or custom commands installed (.claude/skills/NAME/SKILL.md, .claude/commands/NAME.md)": "未安装技能或自定义命令（.claude/skills/NAME/SKILL.md、.claude/commands/NAME.md）",
		"skills and commands (Enter puts /name in the composer)":                                          "技能和命令（Enter 在输入框中写入 /name）",
		"(no prompt yet)":                        "（尚无提示）",
		"%s  %d turn(s)  %s  %s":                 "%s  %d 轮  %s  %s",
		"just now":                               "刚刚",
		"%dm ago":                                "%d 分钟前",
		"%dh ago":                                "%d 小时前",
		"%dd ago":                                "%d 天前",
		"no saved conversations in this project": "本项目没有已保存的对话",
		"resume a conversation":                  "继续一个对话",
		"go on from what Reasonix wrote (before line %d), as a new conversation": "从 Reasonix 所写的部分（第 %d 行之前）继续，作为新对话",
		"take it as it stands, the changes as mine, as a new conversation":       "按现状接受，改动算作我的，作为新对话",
		"leave it": "不打开",
		"this conversation was changed outside Reasonix": "此对话在 Reasonix 之外被改动过",
		"forked %s into %s": "已将 %s 分支为 %s",
		"nothing to rewind: this conversation has no turns yet":          "没有可回退的内容：本对话还没有任何轮次",
		"rewind to just before":                                          "回退到该轮之前",
		"undid the rewind to turn %d":                                    "已撤销回退到第 %d 轮的操作",
		"rewound to just before turn %d of %d (/rewind undo reverts it)": "已回退到第 %d 轮之前（共 %d 轮；/rewind undo 可撤销）",
		"no file changed since then":                                     "此后没有文件改动",
		"restored":                                                       "已恢复",
		"created":                                                        "已重建",
		"removed":                                                        "已删除",
		"kept (ignored or too large)":                                    "已保留（被忽略或过大）",
		"[::b]context[::-] %s of %s tokens (%d%%)":                       "[::b]上下文[::-] %s / %s 令牌（%d%%）",
		"[::b]context[::-] %s tokens; the window is unknown (context_window = 0), so nothing compacts on its own; /compact still folds": "[::b]上下文[::-] %s 令牌；窗口大小未知（context_window = 0），因此不会自动压缩；/compact 仍可手动压缩",
		"(parts are estimates; /compact folds the history)":                                                                             "（各部分为估算值；/compact 会折叠历史）",
		"this front end's engine reports no context window":                                                                             "此前端的引擎不提供上下文窗口信息",
		"this front end's engine cannot compact":                                                                                        "此前端的引擎不支持压缩",
		"MCP servers":                                                                                                                   "MCP 服务器",
		"no MCP servers configured ([[plugins]] in reasonix.toml, or .mcp.json)":                                                        "未配置 MCP 服务器（reasonix.toml 中的 [[plugins]]，或 .mcp.json）",
		"signing in to %s: finish it in the browser":                                                                                    "正在登录 %s：请在浏览器中完成",
		"usage: /mcp, or /mcp login NAME":                                                                                               "用法：/mcp，或 /mcp login NAME",
		"hooks":                                                                                                                         "钩子",
		"no hooks loaded (hooks come from [[hooks]] in reasonix.toml and .claude/settings*.json)":                                       "未加载钩子（钩子来自 reasonix.toml 的 [[hooks]] 和 .claude/settings*.json）",
		"no background jobs (the model starts one with bash run_in_background; the job tool reads it or, with kill, stops it)": "没有后台任务（模型用 bash 的 run_in_background 启动任务，用 job 工具读取输出或以 kill 停止）",
		"[::b]background jobs[::-] [gray](%d running; they end with their session)[-]":                                         "[::b]后台任务[::-][gray]（%d 个运行中；随所属会话结束）[-]",
		"  %s %s [::b]running[::-] %s · %s%s\n      %s":                                                                        "  %s %s [::b]运行中[::-] %s · %s%s\n      %s",
		"  [gray]■[-] %s %s after %s · %s%s\n      [gray]%s[-]":                                                                "  [gray]■[-] %s %s，用时 %s · %s%s\n      [gray]%s[-]",
		"exited %d":           "退出码 %d",
		"exited with code %d": "退出码 %d",
		"killed":              "已终止",
		"%s%s background %s %s [gray]· %s · %s · %s[-]": "%s%s 后台任务 %s %s [gray]· %s · %s · %s[-]",
		// Reasoning, subagent, planner and step blocks, diffs.
		"thought for %s (%d words)":                                                  "思考了 %s（%d 词）",
		"… (the rest is not kept)":                                                   "…（其余部分未保留）",
		"[gray::d]✻ thinking… %s · %d words[-::-]":                                   "[gray::d]✻ 思考中… %s · %d 词[-::-]",
		"[gray]  … and %d more running[-]":                                           "[gray]  … 另有 %d 个运行中[-]",
		"[gray]  … %d more lines (the live view is cut to a third of the screen)[-]": "[gray]  … 另有 %d 行（实时视图最多占屏幕的三分之一）[-]",
		"planner":                   "规划器",
		"done":                      "完成",
		"failed:":                   "失败：",
		"stopped at the step limit": "已达步数上限而停止",
		"ended":                     "已结束",
		"running %s":                "运行 %s",
		"writing":                   "输出中",
		"%s tokens":                 "%s 令牌",
		"call":                      "次调用",
		"job":                       "个任务",
		"turn":                      "轮",
		"… %d more lines · %s":      "… 另有 %d 行 · %s",
		"Ctrl-T shows them, Ctrl-O the whole output": "Ctrl-T 展开，Ctrl-O 查看完整输出",
		"Ctrl-O shows them":                          "Ctrl-O 查看",
		"%d files":                                   "%d 个文件",
		"[Pasted text #%d, %d lines]":                "[粘贴文本 #%d，%d 行]",
		"no plan editor is configured":               "未配置计划编辑器",
		"could not hand the terminal to the editor":  "无法把终端交给编辑器",
		"(unknown model)":                            "（未知模型）",
		// Shift-Tab's postures.
		"this front end cannot switch the permission posture": "此前端无法切换权限姿态",
		"Switch to yolo? Every tool call runs without asking, except dangerous commands, deny rules and control files. Shift-Tab again goes back to ask.": "切换到 yolo？除危险命令、deny 规则和控制文件外，所有工具调用都不再询问。再按 Shift-Tab 回到 ask。",
		"posture %s: %s": "姿态 %s：%s",
		"tools that change something ask first, unless a rule allows them":                                   "会改动内容的工具先询问，除非有规则允许",
		"changes no rule mentions run without asking; ask and deny rules and dangerous commands still apply": "规则未提及的改动直接运行；ask、deny 规则和危险命令仍然生效",
		"everything runs without asking except denied calls, dangerous commands and control files":           "除被拒绝的调用、危险命令和控制文件外，一律直接运行",
		// The UI's own notices and transcript labels.
		"Ask Reasonix… (Enter sends, Ctrl-J newline, /help)":                           "向 Reasonix 提问…（Enter 发送，Ctrl-J 换行，/help）",
		"still working on %s; wait, or press Ctrl-C to cancel it":                      "仍在处理%s；请等待，或按 Ctrl-C 取消",
		"still working on %s; this applies between turns: wait, or press Ctrl-C first": "仍在处理%s；此操作在两轮之间生效：请等待，或先按 Ctrl-C",
		"still working; press Ctrl-C first":                                            "仍在工作中；请先按 Ctrl-C",
		"chat":                                                                         "对话",
		"goal":                                                                         "目标",
		"compact":                                                                      "压缩",
		"interrupted":                                                                  "已中断",
		"plan rejected; nothing was changed":                                           "计划被拒绝；未做任何改动",
		"error:":                                                                       "错误：",
		"draft cleared (Up brings it back); Ctrl-C again quits":  "草稿已清除（按 ↑ 可找回）；再按一次 Ctrl-C 退出",
		"the paste went to the draft; it shows when this closes": "粘贴的内容已放入草稿；关闭此窗口后可见",
		"press Ctrl-C again (or Ctrl-D) to quit":                 "再按一次 Ctrl-C（或 Ctrl-D）退出",
		"effort":                                                 "推理强度",
		"todo %d/%d":                                             "待办 %d/%d",
		"%d worker(s)":                                           "%d 个执行者",
		"[::b]%s running[::-] [gray](/jobs)[-]":                  "[::b]%s运行中[::-] [gray](/jobs)[-]",
		"goal turn %d/%d":                                        "目标 第 %d/%d 轮",
		"%d step(s) running: %s":                                 "%d 个步骤运行中：%s",
		"compacted:":                                             "已压缩：",
		"[yellow]hook %s %s:[-] ":                                "[yellow]钩子 %s %s：[-] ",
		"stopped at the step limit; raise agent.max_steps (or --max-steps) to let it continue": "已达到步数上限而停止；调高 agent.max_steps（或 --max-steps）可继续",
		"todos":                           "待办",
		"resumed session %s (%d turn(s))": "已继续会话 %s（%d 轮）",
		"plan ready":                      "计划已就绪",
		"(saved as %s)":                   "（已保存为 %s）",
		"[::b]plan:[::-] %s%s":            "[::b]计划：[::-] %s%s",
		"[green]validation passed[-] %s [gray](%d ms)[-]":                                "[green]验证通过[-] %s [gray]（%d ms）[-]",
		"[red]validation failed[-] %s [gray](exit %d, attempt %d)[-]":                    "[red]验证失败[-] %s [gray]（退出码 %d，第 %d 次尝试）[-]",
		"Start a new conversation? The current one stays saved; /resume brings it back.": "开始新对话？当前对话会保留，/resume 可找回。",
		"unknown command /%s":                   "未知命令 /%s",
		"; did you mean /%s?":                   "；是否想用 /%s？",
		" (/help lists the commands)":           "（/help 列出所有命令）",
		"usage: /plan TEXT":                     "用法：/plan TEXT",
		"new conversation":                      "新对话",
		"no goal; /goal TEXT sets one":          "没有目标；/goal TEXT 可设置",
		"a goal is running; press Ctrl-C first": "目标正在进行；请先按 Ctrl-C",
		"goal cleared":                          "目标已清除",
		"[::b]goal[::-] %s\n  status %s after %d of at most %d turns": "[::b]目标[::-] %s\n  状态 %s，已用 %d 轮，最多 %d 轮",
		" (%s)":                   "（%s）",
		"\n  last report: %s: %s": "\n  最近报告：%s：%s",
		"commands":                "命令",
		"↑↓ move · Tab/Enter take · Esc close":                                  "↑↓ 移动 · Tab/Enter 选取 · Esc 关闭",
		"no command starts with %s":                                             "没有以 %s 开头的命令",
		"nothing matches %s":                                                    "没有与 %s 匹配的内容",
		"queued: %s (sent when the current turn ends; Esc interrupts the turn)": "已排队：%s（当前轮次结束后发送；Esc 中断当前轮次）",
		"prompt history: %s":                                                    "提示历史：%s",
		"the prompt was not saved to the history: %s":                           "提示未保存到历史：%s",
		"no earlier prompts to search":                                          "没有可搜索的历史提示",
		"search: ":                                                              "搜索：",
		"no prompt matches":                                                     "没有匹配的提示",
		"type to filter  [::b]↑/↓[::-] move  [::b]Enter[::-] put in the composer  [::b]Esc[::-] close": "输入以筛选  [::b]↑/↓[::-] 移动  [::b]Enter[::-] 放入输入框  [::b]Esc[::-] 关闭",
		"search prompts":     "搜索历史提示",
		" … (+%d lines)":     " …（另 %d 行）",
		"no tool output yet": "还没有工具输出",
		"(no output)":        "（无输出）",
		"[gray]%d call(s), newest first · ↑/↓ scroll · Esc closes[-]": "[gray]%d 次调用，最新的在前 · ↑/↓ 滚动 · Esc 关闭[-]",
		"tool output":  "工具输出",
		"approval: %s": "审批：%s",
		"saved %s to this project's reasonix.toml ([permissions] allow)": "已将 %s 保存到本项目的 reasonix.toml（[permissions] allow）",
		"question: %s": "提问：%s",
		"answer: ":     "回答：",
		// The first-run setup screen.
		"[::b]Welcome to Reasonix[::-]\n\nNo model provider is configured yet. Pick one; keys already in your environment are used as they are.\n[gray]Enter picks · Ctrl-C leaves · `reasonix demo` shows a scripted session first[-]": "[::b]欢迎使用 Reasonix[::-]\n\n尚未配置模型提供方。请选择一个；环境中已有的密钥会直接使用。\n[gray]Enter 选择 · Ctrl-C 退出 · `reasonix demo` 可先看一段演示会话[-]",
		"[::b]The key of %s is missing[::-]\n\n$%s is set nowhere: not in the environment, a .env file or the credential store. Paste the key to keep it in the credential store.\n[gray]Enter picks · Ctrl-C leaves[-]":                "[::b]缺少 %s 的密钥[::-]\n\n环境变量、.env 文件和凭据存储中都没有设置 $%s。粘贴密钥即可保存到凭据存储。\n[gray]Enter 选择 · Ctrl-C 退出[-]",
		"Provider":                               "提供方",
		"no key needed":                          "无需密钥",
		"key found in $%s":                       "已在 $%s 中找到密钥",
		"$%s not set: paste a key next":          "$%s 未设置：下一步粘贴密钥",
		"Local server (vLLM, Ollama, llama.cpp)": "本地服务器（vLLM、Ollama、llama.cpp）",
		"Base URL":                               "API 地址",
		"API key":                                "API 密钥",
		"Model":                                  "模型",
		"Test and save":                          "测试并保存",
		"Back":                                   "返回",
		"the base URL is empty":                  "API 地址为空",
		"paste the key, or quit and export %s":   "请粘贴密钥，或退出后导出 %s",
		"testing %s …":                           "正在测试 %s …",
		"Tab moves between fields · Enter on a button presses it · Esc goes back":                     "Tab 在字段间切换 · 在按钮上按 Enter 执行 · Esc 返回",
		"The key is read from $%s; the config keeps only the variable's name.":                        "密钥从 $%s 读取；配置中只保存变量名。",
		"$%s is not set. Paste a key (kept in your credential store, or a file readable only by you)": "$%s 未设置。请粘贴密钥（保存在凭据存储中，或仅你可读的文件中）",
		"; get one at %s": "；可在 %s 获取",
		", or leave with Ctrl-C and export the variable.":               "，或按 Ctrl-C 退出后导出该变量。",
		", or leave it empty and export the variable before you start.": "，或留空并在启动前导出该变量。",
		"Leave the model empty to take the first one the server lists.": "模型留空则使用服务器列出的第一个。",
		"the server lists no models; type the model's name":             "服务器没有列出任何模型；请输入模型名称",
		"fix the fields and try again, or Esc to pick another provider": "修改字段后重试，或按 Esc 选择其他提供方",
		// The question before a session whose project's reasonix.toml
		// waits for trust, and the reasons config gives for each setting.
		"[::b]Trust this project?[::-]\n\nThe project in %s makes settings a project may only make once you trust it; until then they are not applied:":                                                                                                                                                                               "[::b]信任此项目？[::-]\n\n%s 中的项目包含只有在你信任该项目后才会生效的设置；在此之前它们不会被应用：",
		"Read the files before you trust them: a repository you did not write can send your conversation and API key elsewhere, or run commands without asking you, this way. A change to these settings asks again; `reasonix trust --revoke` forgets the trust.\n[gray]↑/↓ and Enter, or 1 / 2 · Esc is Not now · Ctrl-C leaves[-]": "信任之前请先阅读这些文件：不是你编写的仓库可以借此把你的对话和 API 密钥发往别处，或不经询问就执行命令。这些设置有变化时会再次询问；`reasonix trust --revoke` 可撤销信任。\n[gray]↑/↓ 和 Enter，或 1 / 2 · Esc 即暂不 · Ctrl-C 退出[-]",
		"Trust this project": "信任此项目",
		"Not now":            "暂不",
		"apply these settings, now and in later sessions":    "应用这些设置，本次及以后的会话都生效",
		"start without them (you are asked again next time)": "不应用它们直接开始（下次还会询问）",
		"(%s)": "（%s）",
		"model endpoints: the conversation and your API key would go there": "模型端点：对话内容和你的 API 密钥会发往那里",
		"names a model of this file's providers":                            "指向本文件中提供方的模型",
		"turns the sandbox off":                                             "关闭沙箱",
		"lets commands use the network":                                     "允许命令访问网络",
		"more paths commands may write":                                     "命令可写入更多路径",
		"more paths tools may read":                                         "工具可读取更多路径",
		"moves the workspace, where commands may write":                     "移动工作区（命令可写入的位置）",
		"runs calls without asking":                                         "不经询问就执行调用",
		"runs the calls it matches without asking you":                      "不经询问就执行它匹配的调用",
	}
}}

// helpTextZh is helpText in Chinese; command names, keys and arguments
// stay as typed.
const helpTextZh = `[::b]命令[::-]
  /goal TEXT    跨多轮持续处理 TEXT，直到完成
  /goal         查看保存的目标 · /goal clear 清除 · /goal resume 继续
  /plan TEXT    先只读规划，批准后执行计划
  /init [FOCUS[]  研究项目并编写 AGENTS.md（项目的规则文件）
  /model [REF[]  选择下一次请求的模型，或切换到 provider/model（保存在会话中）
  /models       已配置的模型，以及各提供方 /models 接口提供的模型
  /effort [LEVEL[]  推理强度 low、medium、high 或 default（保存在会话中）
  /cost         目前为止各模型的令牌、缓存命中和费用
  /agents       已安装的子代理及其来源
  /skills       技能、自定义命令和 MCP 提示及其来源
  /new          开始新对话（当前对话仍会保存）
  /clear        同上，但会先确认
  /resume       选择本项目之前的对话并继续
  /rewind       选择一轮：对话和文件回到这一轮之前
  /rewind undo  撤销上一次回退
  /compact [FOCUS[]  立即压缩上下文 · /context 查看占用情况
  /hooks        已加载的钩子 · /mcp MCP 服务器 · /jobs 后台任务
  /mcp login NAME  通过浏览器登录远程 MCP 服务器
  /help         本列表
  /quit         退出（也可用 /exit、Ctrl-D 或连按两次 Ctrl-C）
  /NAME ARGS    自定义命令或技能 · !CMD 运行 shell 命令 · @PATH 附加文件
[::b]按键[::-]
  Enter 发送（轮次进行中会排队）· Ctrl-J 或 Alt-Enter 换行 · 粘贴内容作为一次输入
  Esc 或 Ctrl-C 中断当前轮次 · 连按两次 Ctrl-C 或 Ctrl-D 退出
  Shift-Tab 切换姿态：ask → auto → yolo（yolo 需确认）
  行首输入 / 打开命令菜单，@ 打开文件菜单：↑/↓ 移动，Tab 或 Enter 选择，Esc 关闭
  Tab 补全命令或 @路径 · Ctrl-T 展开或折叠块（推理、代理、差异）
  PgUp/PgDn 或滚轮滚动 · End 重新跟随新输出 · Ctrl-O 查看完整的工具输出
  ↑/↓ 调出之前的提示（在首行/末行时）· Ctrl-R 搜索`
