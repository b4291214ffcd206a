package notify

import (
	"context"
	"io"
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

// TestSendOnceSaysWhyOnOneLine: a service's error that quotes its server's
// words over several lines is said on one, for the reader of the command's
// output takes a channel's outcome as one line.
func TestSendOnceSaysWhyOnOneLine(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"code":40001,"error":"invalid request:\n  the topic\n  is taken"}`)
	}))
	defer srv.Close()
	chans, bad := Parse([]byte("ntfy://"+strings.TrimPrefix(srv.URL, "http://")+"/topicSECRET?disabletls=yes"), "F")
	if len(chans) != 1 {
		t.Fatalf("Parse: %v", bad)
	}
	err := SendOnce(context.Background(), chans[0], "an alert", 5*time.Second)
	want := "failed to send ntfy notification: server response: invalid request: the topic is taken (40001)"
	if err == nil || err.Error() != want {
		t.Errorf("SendOnce = %q, want %q", err, want)
	}
}
