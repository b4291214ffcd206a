package main

// Delete this file when tick.go defines runTick.
var runTick = notYet("tick")
