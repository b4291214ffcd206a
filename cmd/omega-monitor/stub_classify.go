package main

// Delete this file when classify.go defines runClassify.
var runClassify = notYet("classify")
