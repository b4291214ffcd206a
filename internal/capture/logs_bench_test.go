package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkLocalLogs measures what a local poll pays to find the pane's
// Qwen Code records and Copilot CLI events logs among many: n of each
// under their homes, all old but one of each.
func BenchmarkLocalLogs(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			home := b.TempDir()
			old := time.Now().Add(-time.Hour)
			for i := range n {
				for _, p := range []string{
					filepath.Join(home, ".qwen", "projects", fmt.Sprint("p", i), "chats", "s.jsonl"),
					filepath.Join(home, ".copilot", "session-state", fmt.Sprint("s", i), "events.jsonl"),
				} {
					os.MkdirAll(filepath.Dir(p), 0o700)
					text := qwenUser("/w", time.Now())
					if strings.Contains(p, "copilot") {
						text = copilotStart("/w", time.Now())
					}
					os.WriteFile(p, []byte(text), 0o600)
					if i > 0 {
						os.Chtimes(p, old, old)
					}
				}
			}
			o := LocalOptions(func(k string) string { return map[string]string{"HOME": home}[k] }, true, b.TempDir(), time.Now(), nil)
			b.ResetTimer()
			for b.Loop() {
				c, err := Read(strings.NewReader("agent:@1.%2\t/w\n"+PaneMark+"\nthe pane\n"), o)
				if n := len(eventsOf(c, "copilot-cli").Tails); err != nil || len(c.QwenChats) != 1 || n != 1 {
					b.Fatalf("%v: %d records, %d events logs", err, len(c.QwenChats), n)
				}
			}
		})
	}
}
