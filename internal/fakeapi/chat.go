package fakeapi

// This file is the fake OpenAI Chat Completions API that the agents with an
// OpenAI-compatible provider talk to (Pi's models.json, OpenCode's and Qwen
// Code's providers, Copilot CLI's COPILOT_PROVIDER_BASE_URL): POST
// /v1/chat/completions, answered whole or as a stream of chunks ending in
// [DONE], and GET /v1/models. The same rules and replies as the Messages
// API choose the answer; a Bash tool call becomes a function call of the
// agent's shell tool (bash).

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ChatModel is the one model the fake lists.
const ChatModel = "fake-model"

// NewChat starts a fake Chat Completions API on 127.0.0.1 answering by
// rules (DefaultRules when none are given), closed when the test ends. Its
// URL ends without /v1: an agent's base URL is URL+"/v1".
func NewChat(t testing.TB, rules ...Rule) *Server {
	t.Helper()
	s := startWith(rules, (*Server).serveChat)
	t.Cleanup(s.Close)
	return s
}

// chatRequest is the part of a chat completion request the server reads.
type chatRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// chatText is a message's content as text: a string, or the text of its
// parts, system reminders (<…>) left out.
func chatText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return withoutContext(s)
	}
	var parts []block
	if json.Unmarshal(content, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if t := strings.TrimSpace(p.Text); p.Type == "text" && t != "" && !strings.HasPrefix(t, "<") {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// withoutContext is s without the context blocks a client puts before the
// human's words (Copilot CLI's <current_datetime>…</current_datetime>).
func withoutContext(s string) string {
	for {
		t := strings.TrimLeft(s, " \n")
		name, _, ok := strings.Cut(strings.TrimPrefix(t, "<"), ">")
		if !strings.HasPrefix(t, "<") || !ok || strings.ContainsAny(name, " /") {
			return s
		}
		_, after, ok := strings.Cut(t, "</"+name+">")
		if !ok {
			return s
		}
		s = strings.TrimLeft(after, " \n")
	}
}

// lastChatText returns the text of the last user message; toolResult says
// a tool's result came after it, and results holds those results.
func lastChatText(req *chatRequest) (text string, ok, toolResult bool, results []string) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		switch m.Role {
		case "tool":
			toolResult = true
			results = append([]string{chatText(m.Content)}, results...)
		case "user":
			if toolResult {
				return "", false, true, results
			}
			t := chatText(m.Content)
			return t, strings.TrimSpace(t) != "", false, nil
		}
	}
	return "", false, toolResult, results
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		s.record(Request{Method: r.Method, Path: r.URL.Path, Status: 200, Time: time.Now()})
		writeJSON(w, 200, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": ChatModel, "object": "model", "created": 0, "owned_by": "fakeapi"}}})
		return
	case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.unknownRequest(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
		s.record(Request{Method: r.Method, Path: r.URL.Path, Status: 400, Time: time.Now()})
		writeJSON(w, 400, map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": "fakeapi: " + err.Error()}})
		return
	}
	text, hasText, toolResult, results := lastChatText(&req)
	rec := Request{
		Method: r.Method, Path: r.URL.Path, Model: req.Model, Stream: req.Stream, Tools: len(req.Tools),
		Text: text, HasText: hasText, ToolResult: toolResult, Results: results, Time: time.Now(),
	}
	reply := s.choose(rec)
	if rec.Tools == 0 {
		// A side call (a title, a summary) gets a short answer.
		reply = Text("Fake session title")
	}
	if s.recordAnswer(rec, reply) != 200 {
		if reply.RetryAfter > 0 {
			w.Header().Set("retry-after", strconv.Itoa(int(reply.RetryAfter/time.Second)))
		}
		for k, v := range reply.Header {
			w.Header().Set(k, v)
		}
		e := map[string]any{"type": reply.ErrorType, "message": reply.ErrorMessage, "code": reply.ErrorType}
		for k, v := range reply.ErrorFields {
			e[k] = v
		}
		writeJSON(w, reply.Status, map[string]any{"error": e})
		return
	}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": reply.Text}
		finish := "stop"
		if reply.Tool != nil {
			msg["tool_calls"] = []any{s.chatToolCall(reply.Tool, shellTool(&req))}
			finish = "tool_calls"
		}
		writeJSON(w, 200, s.chatChunk("chat.completion", req.Model, map[string]any{"index": 0, "message": msg, "finish_reason": finish}, len(reply.Text)))
		return
	}
	send, wait := s.sse(w, r)
	delta := func(d map[string]any, finish any) bool {
		return send("", s.chatChunk("chat.completion.chunk", req.Model, map[string]any{"index": 0, "delta": d, "finish_reason": finish}, 0))
	}
	ok := delta(map[string]any{"role": "assistant", "content": ""}, nil)
	if reply.Text != "" {
		for _, chunk := range split(reply.Text, max(reply.Chunks, 1)) {
			if !ok || !wait(reply.Delay) {
				return
			}
			ok = delta(map[string]any{"content": chunk}, nil)
		}
	}
	finish := "stop"
	if ok && reply.Tool != nil {
		call := s.chatToolCall(reply.Tool, shellTool(&req))
		call["index"] = 0
		ok = delta(map[string]any{"tool_calls": []any{call}}, nil)
		finish = "tool_calls"
	}
	ok = ok && delta(map[string]any{}, finish)
	if ok {
		w.Write([]byte("data: [DONE]\n\n"))
		if f, isFlusher := w.(http.Flusher); isFlusher {
			f.Flush()
		}
	}
}

// chatChunk is a completion object of kind object (a whole completion or
// a streamed chunk) holding one choice.
func (s *Server) chatChunk(object, model string, choice map[string]any, tokens int) map[string]any {
	return map[string]any{
		"id": s.id("chatcmpl"), "object": object, "created": time.Now().Unix(), "model": model,
		"choices": []any{choice},
		"usage":   map[string]any{"prompt_tokens": 12, "completion_tokens": tokens/4 + 1, "total_tokens": 13 + tokens/4},
	}
}

// shellTools are the names agents give their shell tool, best first: Pi's,
// OpenCode's and Copilot CLI's bash, Qwen Code's run_shell_command.
var shellTools = []string{"bash", "run_shell_command"}

// shellTool is the name of the shell tool the request offers; bash when it
// offers none of shellTools.
func shellTool(req *chatRequest) string {
	offered := map[string]bool{}
	for _, raw := range req.Tools {
		var t struct {
			Function struct{ Name string } `json:"function"`
		}
		if json.Unmarshal(raw, &t) == nil {
			offered[t.Function.Name] = true
		}
	}
	for _, name := range shellTools {
		if offered[name] {
			return name
		}
	}
	return shellTools[0]
}

// chatToolCall is a function call of the agent's tool: Bash is its shell
// tool, named shell, with the command as its argument.
func (s *Server) chatToolCall(tu *ToolUse, shell string) map[string]any {
	name, args := tu.Name, tu.Input
	if in, isMap := tu.Input.(map[string]any); isMap && tu.Name == "Bash" {
		shellArgs := map[string]any{"command": in["command"]}
		if d, ok := in["description"]; ok && shell == "run_shell_command" {
			shellArgs["description"] = d // Qwen Code's tool takes one
		}
		name, args = shell, shellArgs
	}
	b, _ := json.Marshal(args)
	return map[string]any{"id": s.id("call"), "type": "function", "function": map[string]any{"name": name, "arguments": string(b)}}
}
