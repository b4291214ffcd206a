package poll

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

// TestRulesFileMustBeYours: a rules file others can write, another user's,
// or a link, is refused (the built-in rules apply): the rules decide which
// screens are typed into.
func TestRulesFileMustBeYours(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.json")
	assert.NilError(t, os.WriteFile(path, []byte(`{"version":1,"agents":{}}`), 0o600))
	assert.NilError(t, os.Chmod(path, 0o666))
	_, err := ReadRules(path)
	assert.ErrorContains(t, err, "is writable by others")
	assert.NilError(t, os.Chmod(path, 0o600))
	link := filepath.Join(dir, "link.json")
	assert.NilError(t, os.Symlink(path, link))
	_, err = ReadRules(link)
	assert.ErrorContains(t, err, "is a symbolic link")
	if os.Geteuid() == 0 {
		assert.NilError(t, os.Chown(path, 65534, 65534))
		_, err = ReadRules(path)
		assert.ErrorContains(t, err, "belongs to uid 65534")
	}
}
