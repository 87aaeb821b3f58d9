// Command floor is the smallest useful tool loop, written with the standard
// library only (net/http, encoding/json, os/exec). `make bench` builds it
// beside reasonix and runs both against the same scripted server, so the
// figures are ratios to this floor rather than absolute times that depend
// on the machine.
//
//	floor version
//	floor run PROMPT    (REASONIX_BASE_URL, REASONIX_API_KEY, REASONIX_MODEL)
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
)

type call struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type message struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCalls  []call `json:"tool_calls,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
}

var tools = json.RawMessage(`[
{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
{"type":"function","function":{"name":"bash","description":"Run a shell command.","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}]`)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "version" {
		fmt.Println("floor 1")
		return
	}
	if len(os.Args) != 3 || os.Args[1] != "run" {
		fmt.Fprintln(os.Stderr, "usage: floor version | floor run PROMPT")
		os.Exit(2)
	}
	msgs := []message{
		{Role: "system", Content: "You are a coding agent. Use the tools, then answer."},
		{Role: "user", Content: os.Args[2]},
	}
	for step := 0; step < 50; step++ {
		reply, err := complete(msgs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		msgs = append(msgs, reply)
		if len(reply.ToolCalls) == 0 {
			fmt.Println(reply.Content)
			return
		}
		for _, c := range reply.ToolCalls {
			msgs = append(msgs, message{Role: "tool", ToolCallID: c.ID, Content: runTool(c)})
		}
	}
	fmt.Fprintln(os.Stderr, "floor: step limit")
	os.Exit(1)
}

// complete sends one streaming request and folds the SSE deltas into the
// assistant message.
func complete(msgs []message) (message, error) {
	body, _ := json.Marshal(map[string]any{"model": os.Getenv("REASONIX_MODEL"), "messages": msgs, "tools": tools, "stream": true})
	req, _ := http.NewRequest("POST", strings.TrimSuffix(os.Getenv("REASONIX_BASE_URL"), "/")+"/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+os.Getenv("REASONIX_API_KEY"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return message{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return message{}, fmt.Errorf("status %s", resp.Status)
	}
	reply := message{Role: "assistant"}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return message{}, err
		}
		for _, ch := range chunk.Choices {
			reply.Content += ch.Delta.Content
			for _, d := range ch.Delta.ToolCalls {
				for len(reply.ToolCalls) <= d.Index {
					reply.ToolCalls = append(reply.ToolCalls, call{Type: "function", ID: fmt.Sprintf("call_%d", len(reply.ToolCalls))})
				}
				c := &reply.ToolCalls[d.Index]
				if d.ID != "" {
					c.ID = d.ID
				}
				c.Function.Name += d.Function.Name
				c.Function.Arguments += d.Function.Arguments
			}
		}
	}
	return reply, sc.Err()
}

func runTool(c call) string {
	var a struct{ Path, Command string }
	if err := json.Unmarshal([]byte(c.Function.Arguments), &a); err != nil {
		return "error: " + err.Error()
	}
	switch c.Function.Name {
	case "read_file":
		b, err := os.ReadFile(a.Path)
		if err != nil {
			return "error: " + err.Error()
		}
		return string(b)
	case "bash":
		out, err := exec.Command("bash", "-c", a.Command).CombinedOutput()
		if err != nil {
			return string(out) + "error: " + err.Error()
		}
		return string(out)
	}
	return "error: unknown tool " + c.Function.Name
}
