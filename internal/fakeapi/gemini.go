package fakeapi

// This file is the fake Gemini API that Gemini CLI talks to
// (GOOGLE_GEMINI_BASE_URL): POST …/models/M:generateContent, answered whole
// (Gemini CLI's side calls: model routing, next-speaker checks), and
// …/models/M:streamGenerateContent?alt=sse, answered as server-sent chunks.
// The same rules and replies as the Messages API choose the answer; a Bash
// tool call becomes Gemini's run_shell_command.

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"
)

// NewGemini starts a fake Gemini API on 127.0.0.1 answering by rules
// (DefaultRules when none are given), closed when the test ends.
func NewGemini(t testing.TB, rules ...Rule) *Server {
	t.Helper()
	s := startWith(rules, (*Server).serveGemini)
	t.Cleanup(s.Close)
	return s
}

// geminiRequest is the part of a generateContent request the server reads.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             *string         `json:"text"`
			FunctionResponse json.RawMessage `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
	} `json:"tools"`
}

// lastUserParts returns the text of the last user content, and whether it
// carries a function's response instead.
func lastUserParts(req *geminiRequest) (text string, ok, toolResult bool) {
	for i := len(req.Contents) - 1; i >= 0; i-- {
		c := req.Contents[i]
		if c.Role != "user" {
			continue
		}
		for j := len(c.Parts) - 1; j >= 0; j-- {
			p := c.Parts[j]
			if len(p.FunctionResponse) > 0 {
				return "", false, true
			}
			if p.Text != nil && strings.TrimSpace(*p.Text) != "" && !strings.HasPrefix(strings.TrimSpace(*p.Text), "<") {
				return *p.Text, true, false
			}
		}
		return "", false, false
	}
	return "", false, false
}

// geminiSideAnswer is the whole answer to every side call: valid JSON for
// the router (model_choice) and the next-speaker check (next_speaker).
const geminiSideAnswer = `{"reasoning":"fake","model_choice":"flash","next_speaker":"user"}`

func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request) {
	model, method, found := strings.Cut(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:], ":")
	if r.Method != http.MethodPost || !found {
		s.unknownRequest(w, r)
		return
	}
	switch method {
	case "countTokens":
		s.record(Request{Method: r.Method, Path: r.URL.Path, Status: 200, Time: time.Now()})
		writeJSON(w, 200, map[string]any{"totalTokens": 10})
		return
	case "generateContent", "streamGenerateContent":
	default:
		s.unknownRequest(w, r)
		return
	}
	var req geminiRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
		s.record(Request{Method: r.Method, Path: r.URL.Path, Status: 400, Time: time.Now()})
		writeJSON(w, 400, geminiError(400, "fakeapi: "+err.Error()))
		return
	}
	tools := 0
	for _, t := range req.Tools {
		tools += len(t.FunctionDeclarations)
	}
	text, hasText, toolResult := lastUserParts(&req)
	rec := Request{
		Method: r.Method, Path: r.URL.Path, Model: model, Stream: method == "streamGenerateContent", Tools: tools,
		Text: text, HasText: hasText, ToolResult: toolResult, Time: time.Now(),
	}
	var reply Reply
	if rec.Stream {
		reply = s.choose(rec)
	} else {
		reply = Text(geminiSideAnswer)
	}
	if s.recordAnswer(rec, reply) != 200 {
		e := geminiError(reply.Status, reply.ErrorMessage)
		maps.Copy(e["error"].(map[string]any), reply.ErrorFields)
		writeJSON(w, reply.Status, e)
		return
	}
	if !rec.Stream {
		writeJSON(w, 200, geminiChunk([]any{map[string]any{"text": reply.Text}}, "STOP", len(reply.Text)))
		return
	}
	send, wait := s.sse(w, r)
	ok := true
	if reply.Text != "" {
		for _, chunk := range split(reply.Text, max(reply.Chunks, 1)) {
			if !ok || !wait(reply.Delay) {
				return
			}
			ok = send("", geminiChunk([]any{map[string]any{"text": chunk}}, "", len(chunk)))
		}
	}
	var last []any
	if reply.Tool != nil {
		last = append(last, map[string]any{"functionCall": map[string]any{"name": geminiToolName(reply.Tool), "args": geminiArgs(reply.Tool)}})
	}
	_ = ok && send("", geminiChunk(last, "STOP", 1))
}

func geminiToolName(tu *ToolUse) string {
	if tu.Name == "Bash" {
		return "run_shell_command"
	}
	return tu.Name
}

func geminiArgs(tu *ToolUse) any {
	in, ok := tu.Input.(map[string]any)
	if !ok || tu.Name != "Bash" {
		return tu.Input
	}
	return map[string]any{"command": in["command"], "description": in["description"]}
}

func geminiChunk(parts []any, finish string, tokens int) map[string]any {
	if parts == nil {
		parts = []any{}
	}
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	return map[string]any{
		"candidates":    []any{cand},
		"usageMetadata": map[string]any{"promptTokenCount": 12, "candidatesTokenCount": tokens/4 + 1, "totalTokenCount": 13 + tokens/4},
		"modelVersion":  "gemini-fake",
	}
}

// GeminiDailyQuota is the 429 the Gemini API answers when a project's
// daily quota of a model is spent: RESOURCE_EXHAUSTED, with the quota's
// violation (a PerDay quota id, which Gemini CLI takes as terminal) and the
// delay until it resets.
func GeminiDailyQuota(model string, reset time.Duration) Reply {
	return Reply{Status: 429,
		ErrorMessage: "You exceeded your current quota, please check your plan and billing details. " +
			"For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
		ErrorFields: map[string]any{"details": []any{
			map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{
				"quotaMetric":     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
				"quotaId":         "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
				"quotaDimensions": map[string]any{"location": "global", "model": model},
				"quotaValue":      "250",
			}}},
			map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": fmt.Sprintf("%ds", int(reset.Seconds()))},
		}}}
}

// GeminiRateLimit is the 429 of a per-minute quota whose retry delay is
// long: no PerDay quota, a RetryInfo past what Gemini CLI retries.
func GeminiRateLimit(model string, reset time.Duration) Reply {
	r := GeminiDailyQuota(model, reset)
	details := r.ErrorFields["details"].([]any)
	v := details[0].(map[string]any)["violations"].([]any)[0].(map[string]any)
	v["quotaId"], v["quotaMetric"] = "GenerateRequestsPerMinutePerProjectPerModel", "generativelanguage.googleapis.com/generate_content_requests"
	return r
}

func geminiError(code int, message string) map[string]any {
	status := map[int]string{400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[code]
	if status == "" {
		status = "UNKNOWN"
	}
	return map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}}
}
