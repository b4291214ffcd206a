package notify

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNameAndScrub: a channel is named by its line, its service and a host
// that is a machine's; every part of its URL that may be a secret is out of
// anything said about it, a token in the host's place too.
func TestNameAndScrub(t *testing.T) {
	for _, tc := range []struct {
		url, name string
		secrets   []string
	}{
		{"ntfy://ntfy.sh/topicSECRET1", "channel line 1 (ntfy, ntfy.sh)", []string{"topicSECRET1"}},
		{"discord://tokSECRET2@123456789", "channel line 1 (discord)", []string{"tokSECRET2", "123456789"}},
		{"slack://hook:SECRET3AB-F20DUQND3RQ-Webc4MAvoacrpPakR8phF0zi@webhook", "channel line 1 (slack)", []string{"SECRET3AB", "Webc4MAvoacrpPakR8phF0zi"}},
		{"telegram://1234:AAHsecret4@telegram?chats=@mine", "channel line 1 (telegram)", []string{"AAHsecret4", "1234"}},
		{"pushover://shoutrrr:apiSECRET5@userKEY5/?devices=a", "channel line 1 (pushover)", []string{"apiSECRET5", "userKEY5"}},
		{"smtp://me:pwSECRET6@mail.example.com:587/?from=o@b.c&to=a@b.c", "channel line 1 (smtp, mail.example.com:587)", []string{"pwSECRET6"}},
		{"generic+https://127.0.0.1:8080/in/SECRET7?token=SECRET7q", "channel line 1 (generic, 127.0.0.1:8080)", []string{"SECRET7", "SECRET7q"}},
	} {
		c := Channel{Line: 1, URL: tc.url}
		if _, err := service(&c); err != nil {
			t.Errorf("%s: %v", tc.name, c.Scrub(err.Error()))
		}
		if diff := cmp.Diff(tc.name, c.Name()); diff != "" {
			t.Errorf("Name (-want +got):\n%s", diff)
		}
		said := c.Scrub("Post \"" + tc.url + "\": failed; " + strings.Join(tc.secrets, " ") + " " + tc.url)
		for _, s := range tc.secrets {
			if strings.Contains(said, s) {
				t.Errorf("%s: %q in %q", tc.name, s, said)
			}
		}
	}
}

// TestParseLines: each line is a channel or a fault with its number;
// comments and blanks are neither.
func TestParseLines(t *testing.T) {
	text := "# c\n\n  ntfy://ntfy.sh/a  \nnope\nntfy://ntfy.sh/a\ngotify://gotify.example.com/TOKENgg123\n"
	chans, bad := Parse([]byte(text), "F")
	var got []string
	for _, c := range chans {
		got = append(got, c.Name())
	}
	for _, e := range bad {
		got = append(got, e.Error())
	}
	want := []string{
		"channel line 3 (ntfy, ntfy.sh)",
		"channel line 6 (gotify, gotify.example.com)",
		"F:4: not a channel URL: it takes the form SERVICE://..., as ntfy://, slack://, generic+https://",
		"F:5: the same channel as line 3; it is sent to once",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

// TestReadingSendsNothing: reading a Matrix line, whose library logs in as
// it is made, reaches no server and sends no password: a server that is
// down is no bad line, and a malformed line of it still is.
func TestReadingSendsNothing(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	text := "matrix://bot:pwSECRET8@" + host + "/?rooms=!room:example.com&disableTLS=yes\n" +
		"matrix://bot:pw@127.0.0.1:1/?rooms=!room:example.com&disableTLS=yes\n" +
		"matrix://bot:pw@" + host + "/?disableTLS=maybe\n"
	chans, bad := Parse([]byte(text), "F")
	var got []string
	for _, c := range chans {
		got = append(got, c.Name())
	}
	for _, e := range bad {
		got = append(got, e.Error())
	}
	if len(got) != 3 || got[0] != "channel line 1 (matrix, "+host+")" || got[1] != "channel line 2 (matrix, 127.0.0.1:1)" || !strings.HasPrefix(got[2], "F:3: matrix: ") {
		t.Errorf("Parse: %q", got)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("reading the lines reached the server %d times", n)
	}
}
