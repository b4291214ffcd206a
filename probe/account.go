package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// AccountKey reads the account an agent is signed in with from one of its
// own files (Claude Code's ~/.claude.json, Codex's auth.json, Gemini CLI's
// google_accounts.json: an agent's description says which, and the
// field), and returns a digest of it: the same for every pane of one
// account, different for two, and nothing of the id itself, which no page,
// file name or log line of ours ever holds. "" where the file holds no
// such field, or nothing that reads as an id. Such files hold tokens too:
// only the one field is read, and nothing else of them is kept.
func AccountKey(data []byte, field []string) string {
	var v map[string]any
	if len(field) == 0 || json.Unmarshal(data, &v) != nil {
		return ""
	}
	var at any = v
	for _, name := range field {
		m, ok := at.(map[string]any)
		if !ok {
			return ""
		}
		at = m[name]
	}
	id, _ := at.(string)
	id = strings.TrimSpace(id)
	if id == "" || len(id) > 320 { // an e-mail address at most
		return ""
	}
	sum := sha256.Sum256([]byte(strings.Join(field, ".") + "\x00" + id))
	return hex.EncodeToString(sum[:8])
}
