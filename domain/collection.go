package domain

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Collection is a user's private folder of articles.
type Collection struct {
	ID           int64
	OwnerID      int64
	Name         string
	Description  string
	ArticleCount int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// CollectionItem is one article in a folder, with when it was added.
type CollectionItem struct {
	ArticleID int64
	AddedAt   time.Time
}

// Limits on collection fields.
const (
	MaxCollectionNameLen        = 100
	MaxCollectionDescriptionLen = 1000
)

// ValidateCollection adds messages to v for unacceptable fields; nil fields are not checked.
func ValidateCollection(v *ValidationError, name, description *string) {
	if name != nil {
		switch n := strings.TrimSpace(*name); {
		case n == "":
			v.Add("name", "can't be blank")
		case utf8.RuneCountInString(n) > MaxCollectionNameLen:
			v.Add("name", "is too long (maximum is 100 characters)")
		}
	}
	if description != nil && utf8.RuneCountInString(*description) > MaxCollectionDescriptionLen {
		v.Add("description", "is too long (maximum is 1000 characters)")
	}
}
