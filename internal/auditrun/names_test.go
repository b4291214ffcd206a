package auditrun

import (
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	for dir, want := range map[string]string{
		"/src/shop":        "shop",
		"/src/my.shop v2":  "my-shop-v2",
		"/src/a.-b":        "a--b",
		"/src/café_api":    "caf-_api",
		"/src/...":         "project",
		"relative/Web-App": "Web-App",
	} {
		if got := Name(dir); got != want {
			t.Errorf("Name(%q) = %q, want %q", dir, got, want)
		}
	}
}

func TestIsEnvName(t *testing.T) {
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "_x": true, "a1": true,
		"": false, "1A": false, "A-B": false, "A=B": false, "É": false, "A B": false,
	} {
		if got := IsEnvName(name); got != want {
			t.Errorf("IsEnvName(%q) = %v", name, got)
		}
	}
}

// TestPrepare: the project made absolute and its name taken from it, a
// given name kept when safe, and each refusal naming what is wrong.
func TestPrepare(t *testing.T) {
	dir := t.TempDir()
	ok := Settings{Agent: "claude", Parallel: 1, Max: 1, Timeout: 1, Isolation: IsolateNone}
	s := ok
	if err := s.Prepare(dir); err != nil || s.Dir != dir || s.Name != Name(dir) {
		t.Errorf("Prepare(%s): %v, Dir %q, Name %q", dir, err, s.Dir, s.Name)
	}
	for _, c := range []struct {
		name, dir, given, want string
	}{
		{"a name not safe", dir, "a b", "--name may hold only"},
		{"no such directory", dir + "/none", "", "no such file"},
		{"a file", "names_test.go", "", "is not a directory"},
		{"the agent first", dir, "", "--agent must be"},
	} {
		s := ok
		s.Name = c.given
		if c.name == "the agent first" {
			s.Agent = "vim"
		}
		if err := s.Prepare(c.dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
