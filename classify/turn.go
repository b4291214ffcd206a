package classify

// Matchers that read the order of events in a region: which came last, a
// live line or the line that ends it; and whether the last turn has ended.

// latestMatcher matches when, reading up from the bottom of the region, a
// live line comes before any line that ends it: a status line left above
// the line that says the turn stopped is stale.
type latestMatcher struct{ live, ended *pattern }

func latest(live, ended *pattern) matcher { return latestMatcher{live, ended} }

func (m latestMatcher) match(lines []Line) (Line, bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		switch t := lines[i].Text; {
		case m.ended.MatchString(t):
			return Line{}, false
		case m.live.MatchString(t):
			return lines[i], true
		}
	}
	return Line{}, false
}

// openTurnMatcher matches a last turn that has not ended: reading up from the
// bottom of the region, text comes before any line that ends a turn (ended)
// or shows that no turn has begun (origin). A turn whose start scrolled
// out of the region is open too: nothing says it ended.
type openTurnMatcher struct{ ended, origin *pattern }

func openTurn(ended, origin *pattern) matcher { return openTurnMatcher{ended, origin} }

func (m openTurnMatcher) match(lines []Line) (Line, bool) {
	var last Line
	for i := len(lines) - 1; i >= 0; i-- {
		t := lines[i].Text
		switch {
		case m.ended.MatchString(t), m.origin.MatchString(t):
			return Line{}, false
		case last.N == 0 && !isBlank(t):
			last = lines[i]
		}
	}
	return last, last.N != 0
}
