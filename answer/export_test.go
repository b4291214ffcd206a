package answer

// Entries returns an agent's label tables, for the test that proves each
// entry by a golden pane.
func Entries(agent string) (widens, freeText, checkboxes []string) {
	t := tableOf(agent)
	return t.widens, t.freeText, t.checkboxes
}
