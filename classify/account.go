package classify

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// LocalAccount is where an agent keeps the account it is signed in with:
// a file under its home, named by a variable (CLAUDE_CONFIG_DIR) when that
// holds an absolute path, else Default under the user's home ("" for the
// user's home itself), and the field of it that names the account
// (oauthAccount.accountUuid). When a usage limit stops its panes, those of
// one account on this machine are one page, and two accounts two, however
// their limits line up (probe.AccountKey keeps a digest of the field only:
// such a file may hold tokens too).
type LocalAccount struct {
	Home    string `json:"home,omitempty"`
	Default string `json:"default,omitempty"`
	File    string `json:"file"`
	Field   string `json:"field"`
}

// checkAccount checks a description's account, when it gives one.
func checkAccount(a LocalAccount) error {
	if reflect.ValueOf(a).IsZero() {
		return nil
	}
	if a.Home != "" && !envName(a.Home) {
		return fmt.Errorf("account: home: %q is not a variable's name (letters, digits and _, not first a digit)", a.Home)
	}
	if a.Default != "" {
		if err := checkEventsPath(a.Default, false); err != nil {
			return fmt.Errorf("account: default: %v", err)
		}
	}
	if err := checkEventsPath(a.File, false); err != nil {
		return fmt.Errorf("account: file: %v", err)
	}
	if names := strings.Split(a.Field, "."); len(names) > maxFieldNames || slices.ContainsFunc(names, func(n string) bool { return !plainName(n, "_", true) }) {
		return fmt.Errorf("account: field: %q is not a field (names of letters, digits and _, at most %d, a dot between two)", a.Field, maxFieldNames)
	}
	return nil
}

// AccountOf is where the agent named agent keeps its account, as its
// description, built in or in local (nil for the built-in ones only),
// says; false where it says nothing.
func AccountOf(local *Local, agent string) (LocalAccount, bool) {
	for _, a := range local.agents() {
		if a.name == agent {
			return a.account, !reflect.ValueOf(a.account).IsZero()
		}
	}
	return LocalAccount{}, false
}
