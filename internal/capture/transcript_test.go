package capture

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadTranscriptHostile: a host's transcript block is read with caps,
// and what is not the whole tail measured is a transcript with an error,
// never counted; a block with no end fails the frame (nothing after it
// could be told from the transcript); a block after a status line is that
// status's text, and a local frame reads none.
func TestReadTranscriptHostile(t *testing.T) {
	const head = "agent:@1.%2\t/w\n"
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) + "\n" }
	tail := "{\"a\":1}\n"
	tests := []struct {
		name     string
		frame    string
		local    bool
		want     *Transcript
		wantErr  string // of the transcript
		frameErr string
	}{
		{"whole", head + VitalsMark + " 8 abc-1 -w\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, &Transcript{Session: "abc-1", Dir: "-w", Size: 8, Tail: []byte(tail)}, "", ""},
		{"the end of a larger file", head + VitalsMark + " 999 abc-1 -w\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "sent 8 of the transcript's last 999 bytes", ""},
		{"not base64", head + VitalsMark + " 8 abc-1 -w\n!!!!\n" + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "not base64", ""},
		{"a bad mark line", head + VitalsMark + " -1 abc\n" + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "is not", ""},
		{"a folder not Claude Code's", head + VitalsMark + " 8 abc-1 ../..\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, &Transcript{Session: "abc-1", Dir: "-", Size: 8, Tail: []byte(tail)}, "", ""},
		{"more than a tail", head + VitalsMark + " 8 abc-1 -w\n" + strings.Repeat(strings.Repeat("A", 76)+"\n", 2*VitalsTail/76+10) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "more than", ""},
		{"no end", head + VitalsMark + " 8 abc-1 -w\n" + enc(tail) + PaneMark + "\nx\n",
			false, nil, "", "without its end"},
		{"after a status line", head + "{}\n" + StatusEnd + "\n" + VitalsMark + " 8 abc-1 -w\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "", ""},
		{"a Codex log", head + VitalsCodexMark + " 8 2026/03/04/rollout-2026-03-04T12-00-00-ab12.jsonl\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, &Transcript{Log: "2026/03/04/rollout-2026-03-04T12-00-00-ab12.jsonl", Size: 8, Tail: []byte(tail)}, "", ""},
		{"a Codex log named to climb", head + VitalsCodexMark + " 8 2026/03/04/../../../../etc/passwd\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "not named as Codex", ""},
		{"a Codex log named absolutely", head + VitalsCodexMark + " 8 /2026/03/04/rollout-a.jsonl\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "not named as Codex", ""},
		{"a Codex log not named", head + VitalsCodexMark + " 8 -\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "not named as Codex", ""},
		{"a Codex log with control bytes in its name", head + VitalsCodexMark + " 8 2026/03/04/rollout-\x1b[2J.jsonl\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "not named as Codex", ""},
		{"a Codex log line of three fields", head + VitalsCodexMark + " 8 2026/03/04/rollout-a.jsonl x\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "is not", ""},
		{"a Codex log shorter than its size", head + VitalsCodexMark + " 9 2026/03/04/rollout-a.jsonl\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "sent 8 of", ""},
		{"two records", head + VitalsMark + " 8 abc-1 -w\n" + enc(tail) + VitalsEnd + "\n" + VitalsCodexMark + " 8 2026/03/04/rollout-a.jsonl\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "two records", ""},
		{"a Codex log after a status line", head + "{}\n" + StatusEnd + "\n" + VitalsCodexMark + " 8 2026/03/04/rollout-a.jsonl\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			false, nil, "", ""},
		{"a Codex log in a local frame", head + VitalsCodexMark + " 8 2026/03/04/rollout-a.jsonl\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			true, nil, "", ""},
		{"in a local frame", head + VitalsMark + " 8 abc-1 -w\n" + enc(tail) + VitalsEnd + "\n" + PaneMark + "\nx\n",
			true, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Framed: true}
			if tt.local {
				o.StatusDir = t.TempDir()
			}
			c, err := Read(strings.NewReader(tt.frame), o)
			if tt.frameErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.frameErr) {
					t.Fatalf("frame error %v, want %q", err, tt.frameErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := c.Transcript
			if tt.wantErr != "" {
				if got == nil || got.Err == nil || !strings.Contains(got.Err.Error(), tt.wantErr) || got.Tail != nil {
					t.Fatalf("transcript %+v, want the error %q and no bytes", got, tt.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("transcript (-want +got):\n%s", diff)
			}
		})
	}
}
