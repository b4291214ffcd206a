package classify

import (
	"io/fs"
	"testing"
)

// TestBuiltinDescriptionsChecked: the project's own descriptions hold to
// every check an operator's file does; a poll parses them trusted, without
// those checks, so that it does not pay for them.
func TestBuiltinDescriptionsChecked(t *testing.T) {
	files, err := fs.Glob(builtinDescriptions, "agents/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no descriptions: %v", err)
	}
	for _, f := range files {
		data, err := builtinDescriptions.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseLocal(data, f, nil, false); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// BenchmarkDescribedBuiltins is the parse of the project's descriptions,
// as a poll's first screen pays it once.
func BenchmarkDescribedBuiltins(b *testing.B) {
	for b.Loop() {
		describedBuiltins(nil)
	}
}
