package alert

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// These tests run the document mode of scripts/omega-alert-send.sh, with
// real bash and curl, against a fake sendDocument on 127.0.0.1.

// upload is one sendDocument request as the fake API read it.
type upload struct {
	Fields   map[string]string // chat_id, caption, parse_mode
	Filename string
	Content  string
}

// fakeDocAPI is the Bot API's sendDocument: it answers with answers in
// order, repeating the last, and records every upload.
type fakeDocAPI struct {
	t       *testing.T
	srv     *httptest.Server
	answers []answer
	hold    chan struct{} // when set, each request waits for it
	arrived chan struct{} // when set, signalled as each request arrives

	mu      sync.Mutex
	uploads []upload
	bad     []string
}

func newFakeDocAPI(t *testing.T, answers ...answer) *fakeDocAPI {
	f := &fakeDocAPI{t: t, answers: answers}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeDocAPI) serve(w http.ResponseWriter, r *http.Request) {
	if f.arrived != nil {
		f.arrived <- struct{}{}
	}
	if f.hold != nil {
		<-f.hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/bot"+testToken+"/sendDocument" {
		f.bad = append(f.bad, r.Method+" "+r.URL.Path)
		http.Error(w, `{"ok":false,"error_code":404,"description":"Not Found"}`, http.StatusNotFound)
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		f.bad = append(f.bad, "not multipart: "+err.Error())
		http.Error(w, `{"ok":false}`, http.StatusBadRequest)
		return
	}
	u := upload{Fields: map[string]string{}}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.bad = append(f.bad, err.Error())
			break
		}
		b, _ := io.ReadAll(p)
		if p.FormName() == "document" {
			u.Filename, u.Content = p.FileName(), string(b)
			continue
		}
		u.Fields[p.FormName()] = string(b)
	}
	f.uploads = append(f.uploads, u)
	a := f.answers[min(len(f.uploads), len(f.answers))-1]
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	fmt.Fprint(w, a.body)
}

func (f *fakeDocAPI) requests() []upload {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bad) > 0 {
		f.t.Errorf("the fake API got bad requests: %q", f.bad)
	}
	return append([]upload(nil), f.uploads...)
}

const docReport = "# Audit of /p\n\n## D1: rule <one> & two\n1. main.go:3 — a finding ✓\n   > func Run() {}\n"

func writeDoc(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSendDocumentDelivers(t *testing.T) {
	api := newFakeDocAPI(t, ok200)
	e := newSendEnv(t, api.srv.URL)
	doc := writeDoc(t, "report.md", docReport)
	caption := "<b>AUDIT</b> · <code>/p</code>\n3 dimensions: 1 finding &amp; 2 clean"
	r := e.runIn(t, caption, "--document", doc, "--stdin")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	want := []upload{{
		Fields:   map[string]string{"chat_id": testChat, "parse_mode": "HTML", "caption": caption},
		Filename: "report.md",
		Content:  docReport,
	}}
	if diff := cmp.Diff(want, api.requests()); diff != "" {
		t.Errorf("uploads mismatch (-want +got):\n%s", diff)
	}
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("a quiet success printed:\n%s%s", r.stdout, r.stderr)
	}
}

func TestSendDocumentRetries(t *testing.T) {
	parseErr := answer{400, `{"ok":false,"error_code":400,"description":"Bad Request: can't parse entities: Unsupported start tag"}`}
	tests := []struct {
		name     string
		answers  []answer
		env      []string
		code     int
		requests int
		caption  string // of the last request
		logged   bool
	}{
		{name: "429 then success", answers: []answer{busy429, ok200}, requests: 2, caption: "<b>x</b>"},
		{name: "5xx then success", answers: []answer{err500, err502, ok200}, requests: 3, caption: "<b>x</b>"},
		{name: "gives up after the tries", answers: []answer{err500}, env: []string{"OMEGA_ALERT_TRIES=2"}, code: 1, requests: 2, caption: "<b>x</b>", logged: true},
		{name: "refused HTML goes as plain text", answers: []answer{parseErr, ok200}, requests: 2, caption: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeDocAPI(t, tt.answers...)
			e := newSendEnv(t, api.srv.URL, tt.env...)
			doc := writeDoc(t, "report.md", docReport)
			r := e.runIn(t, "<b>x</b>", "--document", doc, "--stdin")
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			ups := api.requests()
			if len(ups) != tt.requests {
				t.Fatalf("%d requests, want %d", len(ups), tt.requests)
			}
			for _, u := range ups {
				if u.Content != docReport || u.Filename != "report.md" {
					t.Errorf("upload %q of %d bytes, want the report", u.Filename, len(u.Content))
				}
			}
			if got := ups[len(ups)-1].Fields["caption"]; got != tt.caption {
				t.Errorf("last caption %q, want %q", got, tt.caption)
			}
			log := e.failedLog(t)
			if tt.logged != (strings.Contains(log, "<b>x</b>") && strings.Contains(log, "document: "+doc)) {
				t.Errorf("failed log, want logged %v:\n%s", tt.logged, log)
			}
		})
	}
}

func TestSendDocumentUsage(t *testing.T) {
	api := newFakeDocAPI(t, ok200)
	e := newSendEnv(t, api.srv.URL)
	doc := writeDoc(t, "report.md", docReport)
	for _, args := range [][]string{
		{"--document"},
		{"--document", doc},
		{"--document", doc, ""},
		{"--document", doc, "a", "b"},
		{"--document", doc, "--stdin"}, // and nothing on it
		{"--document", filepath.Join(t.TempDir(), "missing.md"), "caption"},
		{"--document", t.TempDir(), "caption"},
	} {
		r := e.run(t, args...)
		if r.code != 2 {
			t.Errorf("args %q: exit %d, want 2; stderr:\n%s", args, r.code, r.stderr)
		}
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("%d requests on usage errors", n)
	}
}

// TestSendDocumentHostileName: the upload's name keeps only safe characters,
// so a quote or semicolon in a path cannot reach curl's config or the
// multipart header.
func TestSendDocumentHostileName(t *testing.T) {
	api := newFakeDocAPI(t, ok200)
	e := newSendEnv(t, api.srv.URL)
	doc := writeDoc(t, `re"port;type=x $(id).md`, docReport)
	if r := e.run(t, "--document", doc, "c"); r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	ups := api.requests()
	if len(ups) != 1 || ups[0].Filename != "re_port_type_x___id_.md" || ups[0].Content != docReport {
		t.Errorf("uploads: %+v", ups)
	}
}
