package service

import (
	"context"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=ports.go -destination=mocks/ports_mock.go -package=mocks
//go:generate go tool mockgen -source=reads.go -destination=mocks/reads_mock.go -package=mocks
//go:generate go tool mockgen -source=collection.go -destination=mocks/collection_mock.go -package=mocks

// UserRepository stores accounts. Implementations return domain.ErrNotFound for a missing user,
// domain.ErrEmailTaken / domain.ErrUsernameTaken when a uniqueness rule is violated.
type UserRepository interface {
	Create(ctx context.Context, u domain.User) (domain.User, error)
	// CreateIn is Create in the caller's unit of work; a uniqueness rejection leaves tx usable.
	CreateIn(ctx context.Context, tx Tx, u domain.User) (domain.User, error)
	GetByID(ctx context.Context, id int64) (domain.User, error)
	GetByEmail(ctx context.Context, email string) (domain.User, error)
	GetByUsername(ctx context.Context, username string) (domain.User, error)
	// Update loads the user, applies change to it inside one transaction and stores the result.
	// An error from change aborts the transaction and is returned unchanged.
	Update(ctx context.Context, id int64, change func(*domain.User) error) (domain.User, error)
	// GetByIDs returns the users among ids that exist, keyed by id, in one query.
	GetByIDs(ctx context.Context, ids []int64) (map[int64]domain.User, error)
	// ReplacePasswordHash swaps the stored hash only if it still equals oldHash, so a rehash on
	// login can never overwrite a password changed concurrently.
	ReplacePasswordHash(ctx context.Context, id int64, oldHash, newHash string) error
}

// FollowRepository stores who follows whom. Follow and Unfollow are idempotent.
type FollowRepository interface {
	Follow(ctx context.Context, followerID, followeeID int64) error
	Unfollow(ctx context.Context, followerID, followeeID int64) error
	IsFollowing(ctx context.Context, followerID, followeeID int64) (bool, error)
	// FollowingAmong returns which of ids followerID follows, in one query.
	FollowingAmong(ctx context.Context, followerID int64, ids []int64) (map[int64]bool, error)
}

// PasswordHasher hashes and verifies passwords. Verify reports needsRehash when the stored hash
// was made with weaker parameters than the hasher's current ones.
type PasswordHasher interface {
	Hash(password string) (string, error)
	Verify(password, encoded string) (match, needsRehash bool, err error)
}

// TokenManager issues and verifies access tokens, each tied to a login session. Verify returns
// domain.ErrUnauthorized for any token that is not acceptable, whatever the reason.
type TokenManager interface {
	Issue(userID int64, sessionID string) (string, error)
	Verify(token string) (userID int64, sessionID string, err error)
}

// SessionManager starts sessions and authenticates credentials (SessionService).
type SessionManager interface {
	Start(ctx context.Context, userID int64) (domain.Tokens, error)
	// StartIn is Start in the caller's unit of work.
	StartIn(ctx context.Context, tx Tx, userID int64) (domain.Tokens, error)
	Authenticate(ctx context.Context, token string) (int64, error)
}

// ArticleQuery filters the public article list. Empty strings mean "no filter"; AuthorID and
// FavoritedBy are resolved user ids.
type ArticleQuery struct {
	Tag         string
	AuthorID    int64
	FavoritedBy int64
	Page        domain.Page
}

// ArticleRepository stores articles. Lists return the total count of the filter (ignoring paging);
// ListByAuthor returns summaries (empty Body), the public lists full articles.
type ArticleRepository interface {
	// Create inserts the article; domain.ErrSlugTaken when the slug exists.
	Create(ctx context.Context, a domain.Article) (domain.Article, error)
	// CreateIn is Create in the caller's unit of work; a taken slug leaves tx usable.
	CreateIn(ctx context.Context, tx Tx, a domain.Article) (domain.Article, error)
	GetBySlug(ctx context.Context, slug string) (domain.Article, error)
	// GetByIDs returns the articles among ids that exist, in any order, in one query.
	GetByIDs(ctx context.Context, ids []int64) ([]domain.Article, error)
	// Update locks the article with id, applies change and stores title, description, body and
	// tags with the version guard, in one transaction.
	Update(ctx context.Context, id int64, change func(*domain.Article) error) (domain.Article, error)
	// Transition moves the article to status to if its current status is one of from; otherwise
	// domain.ErrConflict.
	Transition(ctx context.Context, id int64, from []domain.ArticleStatus, to domain.ArticleStatus) (domain.Article, error)
	Delete(ctx context.Context, a domain.Article) error
	ListPublished(ctx context.Context, q ArticleQuery) ([]domain.Article, int64, error)
	Feed(ctx context.Context, followerID int64, p domain.Page) ([]domain.Article, int64, error)
	// ListByAuthor lists an author's own articles, all statuses unless status is set.
	ListByAuthor(ctx context.Context, authorID int64, status domain.ArticleStatus, p domain.Page) ([]domain.Article, int64, error)
	Tags(ctx context.Context) ([]string, error)
}

// InteractiveRepository stores likes and interaction counters.
type InteractiveRepository interface {
	// Like and Unlike are idempotent: only a change of state moves the counter.
	Like(ctx context.Context, biz domain.Biz, id, userID int64) error
	Unlike(ctx context.Context, biz domain.Biz, id, userID int64) error
	// Counters returns counters for every id (zeros for items never interacted with).
	Counters(ctx context.Context, biz domain.Biz, ids []int64) (map[int64]domain.Counters, error)
	// Liked returns which of ids userID currently likes.
	Liked(ctx context.Context, userID int64, biz domain.Biz, ids []int64) (map[int64]bool, error)
	// Collected returns which of ids are in any of userID's collections.
	Collected(ctx context.Context, userID int64, biz domain.Biz, ids []int64) (map[int64]bool, error)
}

// CommentRepository stores comments, numbering each article's comments 1, 2, 3, ...
type CommentRepository interface {
	Create(ctx context.Context, c domain.Comment) (domain.Comment, error)
	// CreateIn is Create in the caller's unit of work.
	CreateIn(ctx context.Context, tx Tx, c domain.Comment) (domain.Comment, error)
	List(ctx context.Context, articleID, afterSeq int64, limit int) ([]domain.Comment, error)
	Get(ctx context.Context, id int64) (domain.Comment, error)
	Delete(ctx context.Context, id int64) error
}
