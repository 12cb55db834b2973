// Package job holds inkwell's in-binary background work: stream consumers, scheduled jobs and
// queue workers. Like web/, it drives the service layer; it never touches storage directly.
package job
