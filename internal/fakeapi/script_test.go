package fakeapi_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
)

// TestScripted checks that a script sees a turn's texts and tool results,
// answers with a tool call when it wants to, and leaves the rest to the
// rules.
func TestScripted(t *testing.T) {
	api := fakeapi.NewScripted(t, func(turn fakeapi.Turn) (fakeapi.Reply, bool) {
		if len(turn.Results) > 0 {
			return fakeapi.Call("Read", map[string]any{"file_path": turn.Results[0].Content}), true
		}
		return fakeapi.Reply{}, false
	})
	ctx := context.Background()

	resp := post(t, ctx, api.URL, false, []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true,
			"content": []any{map[string]any{"type": "text", "text": "first"}, map[string]any{"type": "text", "text": "second"}}},
		map[string]any{"type": "text", "text": "<system-reminder>aside</system-reminder>"},
	})
	var msg struct {
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string         `json:"type"`
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
		} `json:"content"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != "tool_use" || len(msg.Content) != 2 || msg.Content[1].Name != "Read" || msg.Content[1].Input["file_path"] != "first\nsecond" {
		t.Errorf("scripted reply: %+v", msg)
	}

	resp = post(t, ctx, api.URL, false, "plain text")
	b, _ := io.ReadAll(resp.Body)
	if !json.Valid(b) || !strings.Contains(string(b), "Done: nothing more to do here.") {
		t.Errorf("the rules did not answer what the script left: %s", b)
	}

	turns := api.Turns()
	if len(turns) != 2 {
		t.Fatalf("%d turns, want 2", len(turns))
	}
	want := fakeapi.Turn{
		Texts:   []string{"<system-reminder>aside</system-reminder>"},
		Results: []fakeapi.ToolResult{{ToolUseID: "toolu_1", Content: "first\nsecond", IsError: true}},
		Tools:   []string{"Bash"},
		Schemas: map[string]json.RawMessage{"Bash": json.RawMessage(`{"type":"object"}`)},
		// post sends an earlier exchange before the message under test.
		First:     "an earlier message",
		Assistant: 1,
	}
	if diff := cmp.Diff(want, turns[0]); diff != "" {
		t.Errorf("first turn (-want +got):\n%s", diff)
	}
	if !turns[1].HasText || turns[1].Text != "plain text" || !turns[1].Offers("Bash") || turns[1].Offers("Read") {
		t.Errorf("second turn: %+v", turns[1])
	}
	if got := len(api.Requests()); got != 2 {
		t.Errorf("%d requests recorded, want 2", got)
	}
}
