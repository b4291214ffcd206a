package live

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/board"
)

func TestReadKeys(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	keys := make(chan key, 16)
	go readKeys(r, keys)
	w.Write([]byte("j\x1b[Bk\x1b[A\x1bOB\r"))
	w.Write([]byte{3})
	w.Close()
	var got []key
	for k := range keys {
		got = append(got, k)
		if len(got) == 8 {
			break
		}
	}
	want := []key{keyDown, keyDown, keyUp, keyUp, keyDown, keyEnter, keyQuit, keyQuit}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

func TestJumpTarget(t *testing.T) {
	tests := []struct {
		w    board.Watcher
		want string
	}{
		{board.Watcher{Target: "api"}, "api"},
		{board.Watcher{Target: "box:api"}, "box:api"},
		{board.Watcher{Host: "gpu", Target: "train"}, "gpu:train"},
		// gpu's watcher of a third host: that host is gpu's alias, not ours.
		{board.Watcher{Host: "gpu", Target: "box:api"}, ""},
	}
	for _, tt := range tests {
		if got := jumpTarget(tt.w); got != tt.want {
			t.Errorf("jumpTarget(%+v) = %q, want %q", tt.w, got, tt.want)
		}
	}
}
