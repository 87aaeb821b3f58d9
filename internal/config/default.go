package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// defaultFile is the text `reasonix setup --example` prints. Lines starting with "## "
// are prose; lines starting with "# " are settings the user can enable by
// deleting the "# ". The tests enable every such line and load the result,
// so the examples stay valid TOML and valid configuration.
const defaultFile = `## Reasonix user configuration.
## Precedence: --config FILE (or REASONIX_CONFIG) > ./reasonix.toml > this file > defaults.
## Strings may use ${VAR} and ${VAR:-default}. Every key is described in docs/CONFIG.md.
## Enable a setting by deleting the "# " in front of it.

## Which model runs by default: a provider name, a model name, or provider/model.
# default_model = "deepseek"

## Extra rules files for every session, after AGENTS.md / CLAUDE.md (relative to the project).
# instructions = ["docs/CONVENTIONS.md"]

# [agent]
# max_steps = 50
## A planner model different from the executor makes runs plan-then-execute.
# planner_model = "deepseek/deepseek-reasoner"
# planner_max_steps = 12
# max_parallel = 4
# goal_max_turns = 20
## After you approve a plan, its file edits run without prompts for this long ("0s" = off).
# plan_write_window = "10m"
# subagent_models = { explore = "deepseek/deepseek-chat" }

# [tools]
# output_limit = 30000
# bash_timeout = "120s"
# bash_max_timeout = "600s"

# [permissions]
## ask | auto | yolo; rules look like Tool(specifier).
# mode = "ask"
# allow = ["Bash(go test:*)"]
# deny = ["Bash(git push:*)"]

## Providers. Keep keys in the environment (api_key_env), not in this file.

## DeepSeek: https://platform.deepseek.com
# [[providers]]
# name = "deepseek"
# base_url = "https://api.deepseek.com/v1"
# api_key_env = "DEEPSEEK_API_KEY"
# models = ["deepseek-chat", "deepseek-reasoner"]
# default = "deepseek-chat"
# context_window = 128000

## Qwen on Alibaba Cloud DashScope (OpenAI-compatible mode).
# [[providers]]
# name = "qwen"
# base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1"
# api_key_env = "DASHSCOPE_API_KEY"
# model = "qwen3-coder-plus"

## Xiaomi MiMo.
# [[providers]]
# name = "mimo"
# base_url = "https://api.xiaomimimo.com/v1"
# api_key_env = "MIMO_API_KEY"
# model = "mimo-v2.5-pro"

## OpenAI.
# [[providers]]
# name = "openai"
# base_url = "https://api.openai.com/v1"
# api_key_env = "OPENAI_API_KEY"
# model = "gpt-4.1"

## A local vLLM (or any OpenAI-compatible) server; no key needed.
# [[providers]]
# name = "local"
# base_url = "${VLLM_BASE_URL:-http://localhost:8000/v1}"
# model = "Qwen/Qwen3-Coder-30B-A3B-Instruct"
# timeout = "10m"
`

// Example is a commented configuration showing the common keys, every
// one disabled; `reasonix setup --example` prints it.
func Example() string { return defaultFile }

// writeAtomic replaces path with data through a temporary file in the same
// directory, so a crash never leaves a half-written config behind. An
// existing file keeps its permissions; a new one gets perm.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	name := tmp.Name()
	cleanup := func(err error) error {
		_ = tmp.Close()
		_ = os.Remove(name)
		return fmt.Errorf("config: writing %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return cleanup(err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return cleanup(err)
	}
	if err := tmp.Sync(); err != nil {
		return cleanup(err)
	}
	if err := tmp.Close(); err != nil {
		return cleanup(err)
	}
	if err := os.Rename(name, path); err != nil {
		_ = os.Remove(name)
		return fmt.Errorf("config: writing %s: %w", path, err)
	}
	return nil
}
