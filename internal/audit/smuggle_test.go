package audit

import (
	"strings"
	"testing"
)

func TestSmuggled(t *testing.T) {
	tests := []struct {
		text string
		bad  bool
	}{
		{"Run is exported and has no doc comment", false},
		{"TestAuditRealGeminiHostileProject in cmd/omega-monitor/audit_hostile_e2e_test.go opens no file", false},
		{"the handler at internal/fakeapi/responses.go:64 logs the path, see sha256 of it", false},
		{"a b c: the three options", false},
		{"the API key is a constant: sk-ant-api03-Zq8XbT4mN2vL9pR6sW1yK3hJ7dF5gC0aE", true},
		{"the password is h u n t e r 2 - s e c r e t", true},
		{"see h-u-n-t-e-r-2-s-e-c-r-e-t for details", true},
		{"token 0123456789abcdef0123456789abcdef leaks", true},
		{"base64 of the netrc: bWFjaGluZSBleGFtcGxlLmNvbSBwYXNzd29yZCBodW50ZXIy", true},
		{strings.Repeat("word ", 90), true},
	}
	for _, tt := range tests {
		if got := smuggled(tt.text) != ""; got != tt.bad {
			t.Errorf("smuggled(%q) = %q, want bad=%v", tt.text, smuggled(tt.text), tt.bad)
		}
	}
}
