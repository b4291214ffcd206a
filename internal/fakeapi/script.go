package fakeapi

import (
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

// A Conversation is what a scripted server knows of a request: the whole
// exchange so far, not only its last message, so that a script can play a
// turn that follows a tool's result.
type Conversation struct {
	// First is the text of the first user message (the prompt a headless
	// agent was started with), without system reminders.
	First string
	// Turn counts the assistant messages so far: 0 on the first request.
	Turn int
	// ToolResult is the text of the last user message's tool result, and
	// ToolError says the agent marked it as an error (a refused or failed
	// tool). Both are empty when the last message carries none.
	ToolResult string
	ToolError  bool
	// Tools names the tools the request offered the model.
	Tools []string
	// System is the system prompt's text.
	System string
}

// A Script chooses the reply to an agent's own turn.
type Script func(Conversation) Reply

// A Scripted server answers each agent turn through a Script and records
// every conversation it was asked about.
type Scripted struct {
	*Server
	script Script

	mu    sync.Mutex
	convs []Conversation
}

// NewScripted starts a fake API on 127.0.0.1 whose agent turns (requests
// that offer tools) are answered by script; side requests get a short
// answer, and the other endpoints answer as the rule-driven server's do. It
// is closed when the test ends.
func NewScripted(t testing.TB, script Script) *Scripted {
	t.Helper()
	s := &Scripted{Server: &Server{done: make(chan struct{})}, script: script}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveScripted))
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

// Conversations returns every agent turn's conversation, oldest first.
func (s *Scripted) Conversations() []Conversation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Conversation(nil), s.convs...)
}

// conversationRequest is the part of a messages request a script reads.
type conversationRequest struct {
	Model  string          `json:"model"`
	Stream bool            `json:"stream"`
	System json.RawMessage `json:"system"`
	Tools  []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type contentBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"is_error"`
}

// blocks reads a message content: a string is one text block.
func blocks(raw json.RawMessage) []contentBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []contentBlock{{Type: "text", Text: s}}
	}
	var bs []contentBlock
	json.Unmarshal(raw, &bs)
	return bs
}

// texts joins the text blocks of a content that are not system reminders.
func texts(raw json.RawMessage) string {
	var out []string
	for _, b := range blocks(raw) {
		if b.Type == "text" && !strings.HasPrefix(strings.TrimSpace(b.Text), systemReminder) {
			out = append(out, b.Text)
		}
	}
	return strings.Join(out, "\n")
}

func (s *Scripted) serveScripted(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		s.serve(w, r)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	var req conversationRequest
	var plain messagesRequest
	if json.Unmarshal(body, &req) != nil || json.Unmarshal(body, &plain) != nil {
		s.record(Request{Method: r.Method, Path: r.URL.Path, Status: 400, Time: time.Now()})
		writeJSON(w, 400, errorBody("invalid_request_error", "fakeapi: unreadable request"))
		return
	}
	text, hasText, toolResult := lastUserText(&plain)
	s.record(Request{
		Method: r.Method, Path: r.URL.Path, Model: req.Model, Stream: req.Stream, Tools: len(req.Tools),
		Text: text, HasText: hasText, ToolResult: toolResult, Status: 200, Time: time.Now(),
	})
	reply := Text("Fake title")
	if len(req.Tools) > 0 {
		c := Conversation{System: texts(req.System)}
		for _, t := range req.Tools {
			c.Tools = append(c.Tools, t.Name)
		}
		for i, m := range req.Messages {
			switch m.Role {
			case "assistant":
				c.Turn++
			case "user":
				if c.First == "" {
					c.First = texts(m.Content)
				}
				if i == len(req.Messages)-1 {
					for _, b := range blocks(m.Content) {
						if b.Type == "tool_result" {
							c.ToolResult, c.ToolError = texts(b.Content), b.IsError
						}
					}
				}
			}
		}
		s.mu.Lock()
		s.convs = append(s.convs, c)
		s.mu.Unlock()
		reply = s.script(c)
	}
	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	if !req.Stream {
		s.whole(w, model, reply)
		return
	}
	s.stream(w, r, model, reply)
}
