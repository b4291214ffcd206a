package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSendOnceBoundsTheLogin: a Matrix server that never answers the login
// (made as the service is) costs one try's time, as one that never answers
// the message does.
func TestSendOnceBoundsTheLogin(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // first: the server's Close waits for its handlers
	chans, bad := Parse([]byte("matrix://bot:pwSECRET@"+strings.TrimPrefix(srv.URL, "http://")+"/?rooms=!r:example.com&disableTLS=yes"), "F")
	if len(chans) != 1 {
		t.Fatalf("Parse: %v", bad)
	}
	start := time.Now()
	err := SendOnce(context.Background(), chans[0], "an alert", time.Second)
	if took := time.Since(start); err == nil || took > 3*time.Second {
		t.Errorf("SendOnce = %v after %v, want no answer within 1s", err, took)
	}
	if want := "no answer within 1s"; err == nil || err.Error() != want {
		t.Errorf("SendOnce = %v, want %q", err, want)
	}
}
