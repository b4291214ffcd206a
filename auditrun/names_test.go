package auditrun

import "testing"

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
