package tui

import (
	"strings"
	"sync"
)

// SetLanguage picks the language of the UI's own labels (the welcome
// line, the status line, the approval overlay, the command menu and
// /help): "zh" (or zh-CN, zh_TW, …) shows them in Chinese, anything else
// in English. What the model writes, and what tools and the engine
// report, is shown as it comes. Call it before Run.
func (a *App) SetLanguage(tag string) {
	base, _, _ := strings.Cut(strings.ToLower(strings.ReplaceAll(tag, "_", "-")), "-")
	a.zh = base == "zh"
}

// tr is the label s (its English text) in the UI's language; a label
// without a translation stays English.
func (a *App) tr(s string) string {
	if !a.zh {
		return s
	}
	if t, ok := zhLabels()[s]; ok {
		return t
	}
	return s
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
var zhLabels = sync.OnceValue(func() map[string]string {
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
		// Command menu.
		"work on a goal over several turns":          "跨多轮持续完成一个目标",
		"plan read-only, then run the approved plan": "只读规划，批准后执行计划",
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
	}
})

// helpTextZh is helpText in Chinese; command names, keys and arguments
// stay as typed.
const helpTextZh = `[::b]命令[::-]
  /goal TEXT    跨多轮持续处理 TEXT，直到完成
  /goal         查看保存的目标 · /goal clear 清除 · /goal resume 继续
  /plan TEXT    先只读规划，批准后执行计划
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
