// Package uploads is the storage room of users' uploads: their rows, each user's stored total and
// the object keys whose last upload went (the orphans the retention pass deletes from the media
// store). The objects themselves are the media store's (repository/mediastore). This package
// imports no core repository.
package uploads
