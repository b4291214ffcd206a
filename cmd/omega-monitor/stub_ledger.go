package main

// Delete this file when ledger.go defines runLedger.
var runLedger = notYet("ledger")
