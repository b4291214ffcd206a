package main

// Delete this file when replay.go defines runReplay.
var runReplay = notYet("replay")
