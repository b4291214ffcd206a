// Package event holds the words of a watcher's history (history.jsonl): the
// name of each event and its shape, which the tick writes through statedir
// and the board, the MCP server and the mirror read. It is pure: no file is
// read or written here (statedir does that), so the pure tick may import it.
package event

// An Event is one line of the history: what happened, in which state, with
// its figures. The line also carries its time and target, which the writer
// adds.
type Event struct {
	Name   string
	State  string
	Fields map[string]any
}

// The events of a poll.
const (
	State         = "state"          // the state changed: from, rule
	Failure       = "failure"        // new failure text, or a capture that failed
	Escalate      = "escalate"       // a human was told: kind, and its figures
	Disagreement  = "disagreement"   // the agent's own status disagrees with the screen
	BudgetReset   = "budget_reset"   // progress advanced: the nudge budget is whole again
	BudgetRearmed = "budget_rearmed" // the operator re-armed the nudge budget (omega-monitor reset); not progress
	Nudge         = "nudge"          // a nudge was handed to the shell
	TargetBack    = "target_back"    // the watched session is back after failures
)

// The outcomes of what the shell did with an action, and of delivery.
const (
	NudgeTyped        = "nudge_typed"
	NudgeNotTyped     = "nudge_not_typed"
	EnterWithheld     = "enter_withheld"
	AlertDelivered    = "alert_delivered"
	AlertNotDelivered = "alert_not_delivered"
	// NudgeCollided: our typing met a human's (the box holds their text
	// and ours); Enter withheld, the box left to them. Said once, for
	// that typing.
	NudgeCollided = "nudge_collided"
)

// The answers an operator gave from the chat: accepted by a poll for the
// dialog on the screen, then typed, or refused (why), each with the option,
// who answered (from, from_id) and the button's nonce.
const (
	AnswerAccepted = "answer_accepted"
	AnswerTyped    = "answer_typed"
	AnswerRefused  = "answer_refused"
)

// OffersRetired: the buttons of the question relayed last were withdrawn
// (reason: gone, answered, replaced or again; message_id, when the funnel
// said it, and record: whether the relay receiver was left a record to
// edit that message).
const OffersRetired = "offers_retired"
