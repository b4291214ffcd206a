package main

// Delete this file when golden.go defines runGolden.
var runGolden = notYet("golden")
