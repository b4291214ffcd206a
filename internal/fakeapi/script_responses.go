package fakeapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// NewScriptedResponses starts a fake Responses API (what Codex CLI talks
// to) on 127.0.0.1 that answers the agent's turns by script, as
// NewScripted does for the Messages API, and every other request (and the
// turns script leaves) as NewResponses does. A Turn's Calls and Results are
// the conversation's function calls and their outputs, a call of a tool in
// a namespace named NAMESPACE__TOOL (mcp__omega_monitor__status,
// multi_agent_v1__spawn_agent); a reply's tool call reaches Codex as
// codexTool names it. Namespaced tools are offered as their namespace. It is closed when the test ends.
func NewScriptedResponses(t testing.TB, script Script, rules ...Rule) *Scripted {
	t.Helper()
	if len(rules) == 0 {
		rules = DefaultRules()
	}
	s := &Scripted{Server: &Server{rules: rules, done: make(chan struct{})}, script: script}
	s.srv = httptest.NewUnstartedServer(s.hear(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses") {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
			if s.scriptedResponses(w, r, body) {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		s.serveResponses(w, r)
	})))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakeapi: %v", err)
	}
	s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// scriptedResponsesRequest is the part of a Responses request a Script
// reads.
type scriptedResponsesRequest struct {
	Model        string `json:"model"`
	Instructions string `json:"instructions"`
	Tools        []struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
		// A namespace's own tools (an MCP server's, the sub-agents').
		Tools []struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"tools"`
	} `json:"tools"`
	Input []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Name    string          `json:"name"`
		NS      string          `json:"namespace"`
		CallID  string          `json:"call_id"`
		Output  json.RawMessage `json:"output"`
		Content json.RawMessage `json:"content"`
	} `json:"input"`
}

// scriptedResponses answers a Responses request by the script; false when
// it did not.
func (s *Scripted) scriptedResponses(w http.ResponseWriter, r *http.Request, body []byte) bool {
	var req scriptedResponsesRequest
	if json.Unmarshal(body, &req) != nil || len(req.Tools) == 0 {
		return false
	}
	var plain responsesRequest
	json.Unmarshal(body, &plain)
	turn := Turn{Schemas: map[string]json.RawMessage{}, System: req.Instructions}
	for _, tool := range req.Tools {
		turn.Tools = append(turn.Tools, tool.Name)
		turn.Schemas[tool.Name] = tool.Parameters
		for _, sub := range tool.Tools {
			// As a call names it: codexTool.
			turn.Tools = append(turn.Tools, tool.Name+"__"+sub.Name)
			turn.Schemas[tool.Name+"__"+sub.Name] = sub.Parameters
		}
	}
	turn.Text, turn.HasText, _ = lastInputText(&plain)
	turn.First = firstInputText(&plain)
	turn.Texts = userTexts(&plain)
	// The results are those after the last message of the model's: the
	// outputs of the calls it made last.
	last := -1
	for i, it := range req.Input {
		switch {
		case it.Type == "function_call" || it.Type == "custom_tool_call":
			name := it.Name
			if it.NS != "" {
				name = it.NS + "__" + name // as a reply names it: codexTool
			}
			turn.Calls = append(turn.Calls, name)
			last = i
		case it.Role == "assistant":
			turn.Assistant++
		}
	}
	for _, it := range req.Input[max(last, 0):] {
		if it.Type == "function_call_output" || it.Type == "custom_tool_call_output" {
			turn.Results = append(turn.Results, ToolResult{ToolUseID: it.CallID, Content: outputText(it.Output)})
		}
	}
	s.mu.Lock()
	s.turns = append(s.turns, turn)
	s.mu.Unlock()
	reply, ok := s.script(turn)
	if !ok {
		return false
	}
	rec := Request{Method: r.Method, Path: r.URL.Path, Model: req.Model, Stream: true, Tools: len(req.Tools),
		Text: turn.Text, HasText: turn.HasText, ToolResult: len(turn.Results) > 0, Status: 200, Time: time.Now()}
	s.record(rec)
	s.streamResponses(w, r, req.Model, reply)
	return true
}

// outputText returns a function call's output as text: a string as it is,
// or the text of its content items joined by newlines.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var items []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &items)
	var out []string
	for _, it := range items {
		if it.Text != "" {
			out = append(out, it.Text)
		}
	}
	return strings.Join(out, "\n")
}

// firstInputText returns the text of the conversation's first user input
// that Codex did not add itself: the prompt a (sub-)agent started with.
// userTexts returns every input text of the request's user items, in
// order, Codex's own blocks included: where an invoked skill's SKILL.md
// reaches the model (<skill>…</skill>).
func userTexts(req *responsesRequest) []string {
	var out []string
	for _, it := range req.Input {
		var parts []block
		if it.Role != "user" || json.Unmarshal(it.Content, &parts) != nil {
			continue
		}
		for _, p := range parts {
			if p.Type == "input_text" {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

func firstInputText(req *responsesRequest) string {
	for _, it := range req.Input {
		if it.Role != "user" {
			continue
		}
		var parts []block
		if json.Unmarshal(it.Content, &parts) != nil {
			continue
		}
		for _, p := range parts {
			t := strings.TrimSpace(p.Text)
			if p.Type == "input_text" && t != "" && !strings.HasPrefix(t, "<") && !strings.HasPrefix(t, "# AGENTS.md") {
				return p.Text
			}
		}
	}
	return ""
}
