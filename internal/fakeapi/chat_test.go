package fakeapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
)

// postChat sends a chat completion request whose last message is last, and
// returns the response.
func postChat(t *testing.T, url string, stream bool, last map[string]any) *http.Response {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"model": fakeapi.ChatModel, "stream": stream,
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "bash"}}},
		"messages": []any{
			map[string]any{"role": "system", "content": "be brief"},
			map[string]any{"role": "user", "content": "an earlier message"},
			map[string]any{"role": "assistant", "content": "an earlier answer"},
			last,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// chatStream reads a streamed completion: the text of its content deltas,
// its tool calls' names and arguments, its finish reason, and whether it
// ended with [DONE].
func chatStream(t *testing.T, resp *http.Response) (text string, calls []string, finish string, done bool) {
	t.Helper()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Function struct{ Name, Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				Finish *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("chunk %q: %v", line, err)
		}
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				calls = append(calls, tc.Function.Name+" "+tc.Function.Arguments)
			}
			if ch.Finish != nil {
				finish = *ch.Finish
			}
		}
	}
	return text, calls, finish, done
}

// TestChat: the Chat Completions fake streams text, calls the shell tool,
// answers a 429 with its retry-after, lists its model, and records the
// last user message's text and a tool's result.
func TestChat(t *testing.T) {
	s := fakeapi.NewChat(t,
		fakeapi.Rule{Match: "run it", Reply: fakeapi.Bash("touch marker", "")},
		fakeapi.Rule{Match: "too much", Reply: fakeapi.Reply{Status: 429, ErrorType: "rate_limit_exceeded", ErrorMessage: "slow down", RetryAfter: 2 * time.Second}},
		fakeapi.Rule{Match: "", Reply: fakeapi.Text("Hello there")})

	text, calls, finish, done := chatStream(t, postChat(t, s.URL, true, map[string]any{"role": "user", "content": "<current_datetime>2026-12-02T22:17:54</current_datetime>\n\nhi"}))
	if text != "Hello there" || len(calls) != 0 || finish != "stop" || !done {
		t.Errorf("text stream: %q %q %q done %v", text, calls, finish, done)
	}
	parts := []any{map[string]any{"type": "text", "text": "please run it"}}
	_, calls, finish, _ = chatStream(t, postChat(t, s.URL, true, map[string]any{"role": "user", "content": parts}))
	if diff := cmp.Diff([]string{`bash {"command":"touch marker"}`}, calls); diff != "" || finish != "tool_calls" {
		t.Errorf("tool call (-want +got):\n%s finish %q", diff, finish)
	}
	chatStream(t, postChat(t, s.URL, true, map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "done"}))
	resp := postChat(t, s.URL, true, map[string]any{"role": "user", "content": "that is too much"})
	if resp.StatusCode != 429 || resp.Header.Get("retry-after") != "2" {
		t.Errorf("rate limit: status %d, retry-after %q", resp.StatusCode, resp.Header.Get("retry-after"))
	}
	models, err := http.Get(s.URL + "/v1/models")
	if err != nil || models.StatusCode != 200 {
		t.Fatalf("models: %v %v", models, err)
	}
	models.Body.Close()
	if diff := cmp.Diff([]string{"hi", "please run it", "that is too much"}, s.Prompts()); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	var results []string
	for _, r := range s.Requests() {
		if r.ToolResult {
			results = append(results, r.Results...)
		}
	}
	if diff := cmp.Diff([]string{"done"}, results); diff != "" {
		t.Errorf("tool results (-want +got):\n%s", diff)
	}
}
