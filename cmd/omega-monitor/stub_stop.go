package main

// Delete this file when stop.go defines runStop.
var runStop = notYet("stop")
