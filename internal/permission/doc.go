// Package permission is Reasonix's safety layer: the allow / ask / deny
// policy in Tool(specifier) syntax, shell-command analysis (every command in
// a line, through wrappers and nested shells), the dangerous-command class
// that always needs a person, the Gate shared by every session of a run,
// path confinement for file tools, and the Landlock sandbox for bash.
//
// # Wiring
//
// Once per run, from [permissions] and [sandbox]:
//
//	pol, err := permission.ParsePolicy(cfg.Mode, cfg.Allow, cfg.Ask, cfg.Deny, cfg.Dangerous)
//	gate := permission.NewGate(permission.GateOptions{
//		Policy: pol, Approver: approver /* nil when headless */, Workspace: root,
//		ProjectConfig: projectToml, LogPath: filepath.Join(home, "permissions.log"),
//		Publish: sink.Publish, SaveRule: config.AppendRule,
//	})
//	guard, err := permission.NewConfiner(root, sb.AllowRead, sb.AllowWrite, home)
//	deny, except := permission.DenyReadPaths(userHome, home, sb.DenyRead)
//	guard.DenyRead(deny, except)
//	sandbox := permission.NewSandbox(permission.SandboxOptions{
//		Mode: sb.Bash, Workspace: root, AllowWrite: sb.AllowWrite, Network: sb.Network,
//		TempDir: runTmp, DenyRead: deny, DenyReadExcept: except,
//		Notify: func(s string) { sink.Publish(events.Event{Type: events.Notice, Text: s}) },
//	})
//
// Per session: env.Guard = guard, env.Sandbox = sandbox.Start (it starts bash
// confined, in place of cmd.Start), and the session's Authorizer is
// gate.ForRole(role, isPlanner), plus .WithOverride(policy) for an agent
// whose file sets its own permissions. `reasonix doctor` prints
// SandboxStatus(opts) and SandboxProtections(opts).
//
// # Decisions
//
// Plan mode refuses every writer first. Then deny rules, then the dangerous
// class (always a fresh human answer, never granted or saved), then ask
// rules, then allow rules, then the posture: readers are allowed, writers
// follow Mode. With no Approver an ask is allowed and a dangerous call is
// blocked with a message telling the model to stop and explain.
//
// # Plan write window
//
// When a person approves a plan, cmd calls gate.OpenWriteWindow(d,
// planFiles): for d, Edit-family calls the posture would ask about are
// allowed without a prompt (logged by "plan-window") if every path is in
// the workspace and, when the plan listed files, among them. Deny rules,
// explicit ask rules and plan mode still apply; bash, and so every
// dangerous command, is never covered.
package permission
