package main

// Delete this file when watch.go defines runWatch.
var runWatch = notYet("watch")
