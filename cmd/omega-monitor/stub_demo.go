package main

// Delete this file when demo.go defines runDemo.
var runDemo = notYet("demo")
