package fakeapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
)

// An event is one server-sent event, its data decoded.
type event struct {
	Name string
	Data map[string]any
}

// post sends a messages request whose last user message has content, and
// returns the response.
func post(t *testing.T, ctx context.Context, url string, stream bool, content any) *http.Response {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"model":      "claude-test",
		"max_tokens": 100,
		"stream":     stream,
		"tools":      []any{map[string]any{"name": "Bash", "input_schema": map[string]any{"type": "object"}}},
		"messages": []any{
			map[string]any{"role": "user", "content": "an earlier message"},
			map[string]any{"role": "assistant", "content": "an earlier answer"},
			map[string]any{"role": "user", "content": content},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var events []event
	var name string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data); err != nil {
				t.Fatalf("data line %q: %v", line, err)
			}
			if data["type"] != name {
				t.Errorf("event %q carries data of type %v", name, data["type"])
			}
			events = append(events, event{name, data})
		}
	}
	return events
}

func names(events []event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Name)
	}
	return out
}

func TestTextStream(t *testing.T) {
	s := fakeapi.New(t, fakeapi.Rule{Match: "", Reply: fakeapi.Text("Hello there")})
	resp := post(t, t.Context(), s.URL, true, "hi")
	if ct := resp.Header.Get("content-type"); ct != "text/event-stream" {
		t.Errorf("content-type %q", ct)
	}
	events := readEvents(t, resp.Body)
	want := []string{"message_start", "content_block_start",
		"content_block_delta", "content_block_delta", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop"}
	if diff := cmp.Diff(want, names(events)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	var text string
	for _, e := range events {
		if e.Name == "content_block_delta" {
			d := e.Data["delta"].(map[string]any)
			if d["type"] != "text_delta" {
				t.Errorf("delta type %v", d["type"])
			}
			text += d["text"].(string)
		}
	}
	if text != "Hello there" {
		t.Errorf("streamed text %q", text)
	}
	stop := events[len(events)-2].Data["delta"].(map[string]any)["stop_reason"]
	if stop != "end_turn" {
		t.Errorf("stop_reason %v, want end_turn", stop)
	}
}

func TestToolUseStream(t *testing.T) {
	s := fakeapi.New(t)
	resp := post(t, t.Context(), s.URL, true, "please "+fakeapi.TriggerAsk)
	events := readEvents(t, resp.Body)
	var partial, tool string
	var stop any
	for _, e := range events {
		switch e.Name {
		case "content_block_start":
			if b := e.Data["content_block"].(map[string]any); b["type"] == "tool_use" {
				tool = b["name"].(string)
			}
		case "content_block_delta":
			if d := e.Data["delta"].(map[string]any); d["type"] == "input_json_delta" {
				partial += d["partial_json"].(string)
			}
		case "message_delta":
			stop = e.Data["delta"].(map[string]any)["stop_reason"]
		}
	}
	if tool != "AskUserQuestion" || stop != "tool_use" {
		t.Fatalf("tool %q, stop_reason %v; want AskUserQuestion, tool_use", tool, stop)
	}
	var input struct {
		Questions []fakeapi.Question `json:"questions"`
	}
	if err := json.Unmarshal([]byte(partial), &input); err != nil {
		t.Fatalf("input %q: %v", partial, err)
	}
	if len(input.Questions) != 1 || len(input.Questions[0].Options) != 2 || input.Questions[0].Header == "" {
		t.Errorf("questions %+v", input.Questions)
	}
}

func TestErrors(t *testing.T) {
	s := fakeapi.New(t)
	for _, c := range []struct {
		text   string
		status int
		typ    string
	}{
		{fakeapi.TriggerError500, 500, "api_error"},
		{fakeapi.TriggerError429, 429, "rate_limit_error"},
	} {
		resp := post(t, t.Context(), s.URL, true, c.text)
		var body struct {
			Type  string
			Error struct{ Type, Message string }
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != c.status || body.Type != "error" || body.Error.Type != c.typ {
			t.Errorf("%q: status %d, body %+v; want %d %s", c.text, resp.StatusCode, body, c.status, c.typ)
		}
	}
}

// TestRecordsText checks that the last user text is recorded byte for byte,
// whether it came as a string or as blocks after the system reminders a
// client adds.
func TestRecordsText(t *testing.T) {
	s := fakeapi.New(t)
	odd := "continue: \"quoted\"; $HOME `x` \\n — ünïcödé ✓\ttab  "
	post(t, t.Context(), s.URL, false, odd).Body.Close()
	post(t, t.Context(), s.URL, false, []any{
		map[string]any{"type": "text", "text": "<system-reminder>\nnot the human's\n</system-reminder>"},
		map[string]any{"type": "text", "text": odd + "2"},
		map[string]any{"type": "text", "text": "<system-reminder>after</system-reminder>"},
	}).Body.Close()
	post(t, t.Context(), s.URL, false, []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
	}).Body.Close()
	if diff := cmp.Diff([]string{odd, odd + "2"}, s.Texts()); diff != "" {
		t.Errorf("texts (-want +got):\n%s", diff)
	}
	reqs := s.Requests()
	if len(reqs) != 3 || !reqs[2].ToolResult || reqs[2].HasText {
		t.Errorf("the tool result request was recorded as %+v", reqs[len(reqs)-1])
	}
}

func TestSlowStreamEndsWithClient(t *testing.T) {
	s := fakeapi.New(t)
	ctx, cancel := context.WithCancel(t.Context())
	resp := post(t, ctx, s.URL, true, fakeapi.TriggerSlow)
	r := bufio.NewReader(resp.Body)
	start := time.Now()
	deltas := 0
	for deltas < 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "text_delta") {
			deltas++
		}
	}
	if time.Since(start) < 500*time.Millisecond {
		t.Errorf("two deltas of a slow stream came within %v", time.Since(start))
	}
	cancel()
	// Close must not wait for the rest of the slow stream.
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited for a slow stream")
	}
}

func TestOtherEndpoints(t *testing.T) {
	s := fakeapi.New(t)
	resp, err := http.Post(s.URL+"/v1/messages/count_tokens", "application/json", strings.NewReader(`{"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("count_tokens: %s", resp.Status)
	}
	resp, err = http.Get(s.URL + "/api/hello")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("unknown endpoint: %s", resp.Status)
	}
	if diff := cmp.Diff([]string{"GET /api/hello"}, s.Unknown()); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
}
