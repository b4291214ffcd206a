package probe

import "testing"

// TestAccountKey: the account of each agent's own file, as its description
// names the field, is a digest that tells two accounts apart and holds
// nothing of the id; a file without the field, a field that is no id, and
// text that is no JSON are no account.
func TestAccountKey(t *testing.T) {
	claude := []string{"oauthAccount", "accountUuid"}
	a := AccountKey([]byte(`{"numStartups": 3, "oauthAccount": {"accountUuid": "0b1c-aa", "emailAddress": "a@example.com"}, "projects": {}}`), claude)
	b := AccountKey([]byte(`{"oauthAccount": {"accountUuid": "9f9f-bb"}}`), claude)
	if a == "" || b == "" || a == b || len(a) != 16 {
		t.Errorf("two accounts: %q and %q, want two digests of 16", a, b)
	}
	if again := AccountKey([]byte(`{"oauthAccount":{"accountUuid":"0b1c-aa"}}`), claude); again != a {
		t.Errorf("the same account read again: %q, want %q", again, a)
	}
	if got := AccountKey([]byte(`{"active": "0b1c-aa"}`), []string{"active"}); got == a {
		t.Error("one id under two fields reads as one account")
	}
	for _, tc := range []struct {
		name, data string
	}{
		{"no field", `{"oauthAccount": {}}`},
		{"an API key user", `{"OPENAI_API_KEY": "sk-x", "tokens": null}`},
		{"a number", `{"oauthAccount": {"accountUuid": 7}}`},
		{"blank", `{"oauthAccount": {"accountUuid": "  "}}`},
		{"not an object on the way", `{"oauthAccount": "x"}`},
		{"not JSON", `oauthAccount: x`},
		{"too long for an id", `{"oauthAccount": {"accountUuid": "` + string(make([]byte, 400)) + `"}}`},
	} {
		if got := AccountKey([]byte(tc.data), claude); got != "" {
			t.Errorf("%s: %q, want no account", tc.name, got)
		}
	}
}
