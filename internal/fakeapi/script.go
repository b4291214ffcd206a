package fakeapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A Turn is one of the agent's own turns (a messages request offering tools)
// as a Script sees it: more of the request than the rules read.
type Turn struct {
	// Text is the last user text, as Request.Text; HasText says there was
	// one.
	Text    string
	HasText bool
	// Texts holds every text block of the last user message, system
	// reminders included, in order: where a client puts an expanded
	// command. On the Responses API it holds every input text of the
	// request's user items, Codex's own blocks (an invoked skill) included.
	Texts []string
	// Results are the tool results the last user message returns.
	Results []ToolResult
	// Tools names the tools the request offered; Schemas holds each one's
	// input schema, by name.
	Tools   []string
	Schemas map[string]json.RawMessage
	// Calls names the tools the model called so far in the conversation,
	// in order.
	Calls []string
	// First is the text of the conversation's first user message without
	// system reminders: the prompt a headless agent was started with.
	// Assistant counts the assistant messages so far (0 on the first
	// request). System is the system prompt's text.
	First     string
	Assistant int
	System    string
}

// A ToolResult is one tool_result block a client sent back.
type ToolResult struct {
	ToolUseID string
	// Content is its text: a string content as it is, or its text blocks
	// joined by newlines.
	Content string
	IsError bool
}

// Offers reports whether the turn offered the tool named name.
func (t Turn) Offers(name string) bool {
	for _, n := range t.Tools {
		if n == name {
			return true
		}
	}
	return false
}

// A Script answers a turn before the rules do; ok false leaves the turn to
// them.
type Script func(Turn) (reply Reply, ok bool)

// Call returns a reply calling the tool name with input, after a short text.
func Call(name string, input any) Reply {
	return Reply{Text: "Let me look.", Chunks: 1, Tool: &ToolUse{Name: name, Input: input}}
}

// A Scripted server answers the agent's turns by a Script first and keeps
// every turn it saw, for tests that follow a conversation across tool calls.
type Scripted struct {
	*Server
	script Script

	mu    sync.Mutex
	turns []Turn
}

// NewScripted starts a fake API on 127.0.0.1 that answers the agent's turns
// by script, and every other request (and the turns script leaves) as New
// does. It is closed when the test ends.
func NewScripted(t testing.TB, script Script, rules ...Rule) *Scripted {
	t.Helper()
	if len(rules) == 0 {
		rules = DefaultRules()
	}
	s := &Scripted{Server: &Server{rules: rules, done: make(chan struct{})}, script: script}
	// Requests reach the script first; the server's own handler gets the
	// rest, with the body put back.
	s.srv = httptest.NewUnstartedServer(s.hear(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/messages" {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
			if s.scripted(w, r, body) {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		s.serve(w, r)
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

// Turns returns every turn of the agent the server saw, oldest first.
func (s *Scripted) Turns() []Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Turn(nil), s.turns...)
}

// scriptRequest is the part of a messages request a Script reads.
type scriptRequest struct {
	Model  string          `json:"model"`
	Stream bool            `json:"stream"`
	System json.RawMessage `json:"system"`
	Tools  []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type scriptBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// blocks returns a message content as blocks: a string is one text block.
func blocks(content json.RawMessage) []scriptBlock {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return []scriptBlock{{Type: "text", Text: s}}
	}
	var bs []scriptBlock
	json.Unmarshal(content, &bs)
	return bs
}

// scripted answers a messages request by the script; false when it did not.
func (s *Scripted) scripted(w http.ResponseWriter, r *http.Request, body []byte) bool {
	var req scriptRequest
	if json.Unmarshal(body, &req) != nil || len(req.Tools) == 0 {
		return false
	}
	turn := Turn{Schemas: map[string]json.RawMessage{}}
	for _, tool := range req.Tools {
		turn.Tools = append(turn.Tools, tool.Name)
		turn.Schemas[tool.Name] = tool.InputSchema
	}
	turn.System = plainText(req.System)
	for _, m := range req.Messages {
		if m.Role == "user" && turn.First == "" {
			turn.First = plainText(m.Content)
		}
		if m.Role != "assistant" {
			continue
		}
		turn.Assistant++
		for _, b := range blocks(m.Content) {
			if b.Type == "tool_use" {
				turn.Calls = append(turn.Calls, b.Name)
			}
		}
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != "user" {
			continue
		}
		for _, b := range blocks(req.Messages[i].Content) {
			switch b.Type {
			case "text":
				turn.Texts = append(turn.Texts, b.Text)
				if !strings.HasPrefix(strings.TrimSpace(b.Text), systemReminder) {
					turn.Text, turn.HasText = b.Text, true
				}
			case "tool_result":
				turn.Results = append(turn.Results, ToolResult{ToolUseID: b.ToolUseID, Content: resultText(b.Content), IsError: b.IsError})
			}
		}
		break
	}
	s.mu.Lock()
	s.turns = append(s.turns, turn)
	s.mu.Unlock()
	reply, ok := s.script(turn)
	if !ok {
		return false
	}
	s.record(Request{Method: r.Method, Path: r.URL.Path, Model: req.Model, Stream: req.Stream, Tools: len(req.Tools),
		Text: turn.Text, HasText: turn.HasText, ToolResult: len(turn.Results) > 0, Status: 200, Time: time.Now()})
	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	if !req.Stream {
		s.whole(w, model, reply)
	} else {
		s.stream(w, r, model, reply)
	}
	return true
}

// plainText joins the text blocks of a content that are not system
// reminders.
func plainText(content json.RawMessage) string {
	var out []string
	for _, b := range blocks(content) {
		if b.Type == "text" && !strings.HasPrefix(strings.TrimSpace(b.Text), systemReminder) {
			out = append(out, b.Text)
		}
	}
	return strings.Join(out, "\n")
}

// Result is the turn's first tool result, and whether it has one.
func (t Turn) Result() (ToolResult, bool) {
	if len(t.Results) == 0 {
		return ToolResult{}, false
	}
	return t.Results[0], true
}

// resultText returns a tool result's content as text.
func resultText(content json.RawMessage) string {
	var texts []string
	for _, b := range blocks(content) {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}
