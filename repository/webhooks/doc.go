// Package webhooks is the storage room of webhooks (#33): the endpoints users and admins register
// and the deliveries of events to them. Deliveries are numbered per endpoint under the endpoint's
// row lock; only the lowest pending delivery of an endpoint has a queue job (enqueued through the
// Jobs port, the job queue's EnqueueIn, in the same unit of work), and the unit of work that finishes it (delivered or dead) enqueues
// the next: an endpoint receives its events in order, each at least once.
package webhooks
