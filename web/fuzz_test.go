package web_test

// Fuzz targets over the request decoding of every endpoint: JSON bodies, query parameters and
// path parameters, sent through the whole router over services mocked to accept anything. The
// property: no panic and no 5xx; every error in the RealWorld shape; and, when the services
// succeed, only statuses the OpenAPI document lists for the operation.
//
// Each target's small seed corpus runs under `go test` like any test, and so does the full seed
// matrix (Test*SeedMatrix), every seed under every mode that matters. To fuzz one target for a
// bounded time:
//
//	go test ./web -run '^$' -fuzz '^FuzzJSONBodies$' -fuzztime 20s
//	go test ./web -run '^$' -fuzz '^FuzzQueryParams$' -fuzztime 20s
//	go test ./web -run '^$' -fuzz '^FuzzPathParams$' -fuzztime 20s

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/mock/gomock"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
)

// fuzzMaxBody is the body limit of the fuzzed router, small so the fuzzer reaches the 413 paths.
const fuzzMaxBody = 4096

// fuzzMode packs into one fuzzed integer what the mocks answer and how the request is sent.
type fuzzMode uint16

const (
	outcomeMask fuzzMode = 0x000f // index into fuzzOutcomes

	idemMask     fuzzMode = 0x0030 // what the idempotency store does with a keyed request
	idemRuns     fuzzMode = 0x0000 // runs it
	idemReplayed fuzzMode = 0x0010 // runs it and calls the answer a replay
	idemInFlight fuzzMode = 0x0020 // the key is busy
	idemMismatch fuzzMode = 0x0030 // the key was used for another request

	modeRateDenied fuzzMode = 1 << 6  // the rate limiter refuses
	modeRateFails  fuzzMode = 1 << 7  // the rate limiter is down (requests pass)
	modeIdemKey    fuzzMode = 1 << 8  // send an Idempotency-Key
	modeChunked    fuzzMode = 1 << 9  // send the body without a Content-Length
	modeAnonymous  fuzzMode = 1 << 10 // send no Authorization
	modeBadAuth    fuzzMode = 1 << 11 // send a malformed Authorization
	modeLongKey    fuzzMode = 1 << 12 // the Idempotency-Key is over 255 characters
	modeOversized  fuzzMode = 1 << 13 // pad a non-empty body past the body limit

	outcomeZero fuzzMode = 0 // services succeed with zero values
	outcomeRich fuzzMode = 1 // services succeed with realistic values
)

type fuzzOutcome struct {
	rich bool
	err  error
}

// fuzzOutcomes are what every service method answers: success, or an error the API maps to a
// 4xx. Errors that become a 5xx by design (an unreachable dependency, an unknown error) are left
// out: the property is that client input alone never causes a 5xx.
var fuzzOutcomes = []fuzzOutcome{
	{},
	{rich: true},
	{err: domain.ErrNotFound},
	{err: domain.ErrForbidden},
	{err: domain.ErrUnauthorized},
	{err: domain.ErrInvalidCredentials},
	{err: domain.ErrRefreshInvalid},
	{err: domain.ErrConflict},
	{err: domain.ErrStaleVersion},
	{err: domain.ErrIllegalTransition},
	{err: domain.NewValidationError("title", "can't be blank")},
	{err: &domain.CodeError{Reason: domain.CodeTooSoon, RetryAfter: 42 * time.Second}},
	{err: &domain.CodeError{Reason: domain.CodeInvalid}},
	{err: &domain.CodeError{Reason: domain.CodeLocked, RetryAfter: 3600 * time.Second}},
	{err: &domain.CodeError{Reason: domain.CodeSendCap, RetryAfter: 7200 * time.Second}},
	{err: domain.ErrAccountCodeInvalid},
	{err: fmt.Errorf("load article: %w", domain.ErrNotFound)},
}

func (m fuzzMode) outcome() fuzzOutcome { return fuzzOutcomes[int(m&outcomeMask)%len(fuzzOutcomes)] }
func (m fuzzMode) idem() fuzzMode       { return m & idemMask }

// Realistic service answers.
var (
	fxTime    = time.Date(2026, 11, 30, 3, 42, 4, 902_000_000, time.UTC)
	fxCursor  = &domain.Cursor{CreatedAt: fxTime, ID: 1}
	fxProfile = domain.Profile{Username: "jake", Bio: "I work at statefarm", Image: "https://i.stack.imgur.com/xHWG8.jpg", Following: true}
	fxUser    = domain.User{ID: authedID, Email: "jake@jake.jake", Username: "jake", Bio: fxProfile.Bio, Image: fxProfile.Image,
		Role: domain.RoleUser, CreatedAt: fxTime, UpdatedAt: fxTime}
	fxArticle = domain.ArticleView{
		Article: domain.Article{ID: 1, Slug: "how-to-train-your-dragon", AuthorID: authedID, Title: "How to train your dragon",
			Description: "Ever wonder how?", Body: "It takes a Jacobian", Tags: []string{"dragons", "training"},
			Status: domain.StatusPublished, Version: 2, CreatedAt: fxTime, UpdatedAt: fxTime},
		Author: fxProfile, Counters: domain.Counters{Reads: 10, Likes: 3, Collects: 1}, Favorited: true, Collected: true,
	}
	fxComment = domain.CommentView{Comment: domain.Comment{ID: 5, ArticleID: 1, Seq: 1, AuthorID: authedID, Body: "Thank you so much!",
		CreatedAt: fxTime, UpdatedAt: fxTime}, Author: fxProfile}
	fxCollection = domain.Collection{ID: 3, OwnerID: authedID, Name: "later", Description: "read later", ArticleCount: 1,
		CreatedAt: fxTime, UpdatedAt: fxTime}
	fxNotifications = service.NotificationList{Items: []domain.Notification{
		{ID: 9, Kind: domain.TopicArticlePublished, ActorUsername: "jake", ArticleSlug: fxArticle.Slug, ArticleTitle: fxArticle.Title, CreatedAt: fxTime},
		{ID: 8, Kind: domain.TopicArticlePublished, ActorUsername: "jake", CreatedAt: fxTime, ReadAt: &fxTime},
	}, Unread: 1, NextCursor: fxCursor}
	fxKeys = []domain.APIKey{
		{ID: 4, UserID: authedID, Name: "ci", Prefix: "iw_abcd", CreatedAt: fxTime, LastUsedAt: &fxTime},
		{ID: 5, UserID: authedID, Name: "laptop", Prefix: "iw_efgh", CreatedAt: fxTime},
	}
	fxUpload = domain.Upload{ID: 7, UserID: authedID, Key: strings.Repeat("ab", 32) + ".png", ContentType: "image/png", Width: 640,
		Height: 480, Bytes: 12345, SHA256: strings.Repeat("ab", 32), CreatedAt: fxTime, Variants: map[string]domain.UploadVariant{
			domain.VariantThumb: {Key: strings.Repeat("cd", 32) + ".png", Width: 160, Height: 120, Bytes: 2345}}}
	fxTokens = domain.Tokens{Access: "header.payload.signature", Refresh: "refresh-token"}
	fxReport = domain.Report{ID: 11, CaseID: 4, ReporterID: authedID, Reason: domain.ReasonSpam, Note: "buy pills", Status: domain.CaseOpen,
		Target: domain.ModerationTarget{Kind: domain.TargetComment, ID: 5, ArticleID: 1, Label: "comment 5 on how-to-train-your-dragon"}, CreatedAt: fxTime}
	fxCase = domain.ModerationCase{ID: 4, Target: fxReport.Target, ArticleSlug: fxArticle.Slug, Status: domain.CaseResolved, ReportCount: 3,
		Reasons: []domain.ReportReason{domain.ReasonSpam, domain.ReasonAbuse}, NewestNote: "buy pills", OpenedAt: fxTime, UpdatedAt: fxTime,
		ResolvedAt: fxTime, Resolution: domain.ResolutionDismiss}
	fxLinks, _ = domain.NewPublicLinks("https://blog.example", "{public}/article/{slug}")
	fxLog      = service.LogList{Entries: []domain.ModerationEntry{{ID: 2, ActorID: 9, ActorName: "mod", Action: domain.ActionDismiss,
		Target: fxReport.Target, Reason: "not spam", At: fxTime}}, NextCursor: fxCursor}
)

// newFuzzRouter is the full router over mocks that accept any call any number of times and answer
// as mode says; with args set, they record the arguments they get.
func newFuzzRouter(rep gomock.TestReporter, mode fuzzMode, args *argLog) http.Handler {
	ctrl := gomock.NewController(rep)
	m := newAllMocks(ctrl)
	oc := mode.outcome()
	err := oc.err

	var (
		user     domain.User
		session  service.Session
		profile  domain.Profile
		article  domain.ArticleView
		list     service.ArticleList
		tags     []string
		comment  domain.CommentView
		comments []domain.CommentView
		col      domain.Collection
		cols     []domain.Collection
		hot      []service.HotView
		found    service.SearchResult
		notes    service.NotificationList
		marked   int64
		uid      int64
		tokens   domain.Tokens
		key      domain.APIKey
		secret   string
		keys     []domain.APIKey
		report   domain.Report
		mcase    domain.ModerationCase
		queue    service.CaseList
		modlog   service.LogList
	)
	if oc.rich {
		user, profile, article = fxUser, fxProfile, fxArticle
		session = service.Session{User: fxUser, Token: fxTokens.Access, Refresh: fxTokens.Refresh}
		list = service.ArticleList{Articles: []domain.ArticleView{fxArticle}, Total: 1, NextCursor: fxCursor}
		tags = []string{"dragons", "training"}
		comment, comments = fxComment, []domain.CommentView{fxComment}
		col, cols = fxCollection, []domain.Collection{fxCollection}
		hot = []service.HotView{{ArticleView: fxArticle, Score: 12.5}}
		found = service.SearchResult{Hits: []service.SearchResultHit{{View: fxArticle, Snippet: "about \x01dragons\x02 <b>"}},
			Total: 1, Next: &domain.SearchCursor{Snapshot: fxArticle.CreatedAt, Score: 0.5, ID: 9, Total: 1}}
		notes, marked = fxNotifications, 2
		uid, tokens = authedID, fxTokens
		key, secret, keys = fxKeys[1], "iw_efgh_secret", fxKeys
		report, mcase, modlog = fxReport, fxCase, fxLog
		queue = service.CaseList{Cases: []domain.ModerationCase{fxCase}, NextCursor: fxCursor}
	}

	a := gomock.Any()
	if args != nil {
		a = args
	}
	m.users.EXPECT().Authenticate(a, a).DoAndReturn(func(_ context.Context, token string) (domain.Credential, error) {
		if token == "TOKEN" {
			return domain.Credential{UserID: authedID, SessionID: "sid"}, nil
		}
		return domain.Credential{}, domain.ErrUnauthorized
	}).AnyTimes()
	m.users.EXPECT().Register(a, a).Return(session, err).AnyTimes()
	m.users.EXPECT().Login(a, a, a).Return(session, err).AnyTimes()
	m.users.EXPECT().Current(a, a).Return(user, err).AnyTimes()
	m.users.EXPECT().Update(a, a, a).Return(user, err).AnyTimes()

	m.profiles.EXPECT().Get(a, a, a).Return(profile, err).AnyTimes()
	m.profiles.EXPECT().Follow(a, a, a).Return(profile, err).AnyTimes()
	m.profiles.EXPECT().Unfollow(a, a, a).Return(profile, err).AnyTimes()
	m.blocks.EXPECT().Block(a, a, a).Return(profile, err).AnyTimes()
	m.blocks.EXPECT().Unblock(a, a, a).Return(profile, err).AnyTimes()
	m.blocks.EXPECT().List(a, a, a, a).Return(service.BlockList{}, err).AnyTimes()

	m.articles.EXPECT().Create(a, a, a).Return(article, err).AnyTimes()
	m.articles.EXPECT().Get(a, a, a).Return(article, err).AnyTimes()
	m.articles.EXPECT().Update(a, a, a, a).Return(article, err).AnyTimes()
	m.articles.EXPECT().Publish(a, a, a).Return(article, err).AnyTimes()
	m.articles.EXPECT().Withdraw(a, a, a).Return(article, err).AnyTimes()
	m.schedule.EXPECT().Schedule(a, a, a, a).Return(article, err).AnyTimes()
	m.schedule.EXPECT().Unschedule(a, a, a).Return(article, err).AnyTimes()
	m.articles.EXPECT().Delete(a, a, a).Return(err).AnyTimes()
	m.articles.EXPECT().Favorite(a, a, a).Return(article, err).AnyTimes()
	m.articles.EXPECT().Unfavorite(a, a, a).Return(article, err).AnyTimes()
	m.articles.EXPECT().List(a, a, a).Return(list, err).AnyTimes()
	m.articles.EXPECT().Feed(a, a, a).Return(list, err).AnyTimes()
	m.articles.EXPECT().Mine(a, a, a, a).Return(list, err).AnyTimes()
	m.articles.EXPECT().Tags(a).Return(tags, err).AnyTimes()

	m.comments.EXPECT().Add(a, a, a, a, a).Return(comment, err).AnyTimes()
	m.comments.EXPECT().List(a, a, a, a, a).Return(service.CommentList{Comments: comments, NextAfter: int64(len(comments))}, err).AnyTimes()
	m.comments.EXPECT().Delete(a, a, a, a).Return(err).AnyTimes()
	m.comments.EXPECT().Edit(a, a, a, a, a).Return(comment, err).AnyTimes()
	m.comments.EXPECT().Replies(a, a, a, a, a, a).Return(service.CommentList{Comments: comments, NextAfter: int64(len(comments))}, err).AnyTimes()

	m.collections.EXPECT().Create(a, a, a).Return(col, err).AnyTimes()
	m.collections.EXPECT().List(a, a).Return(cols, err).AnyTimes()
	m.collections.EXPECT().Update(a, a, a, a).Return(col, err).AnyTimes()
	m.collections.EXPECT().Delete(a, a, a).Return(err).AnyTimes()
	m.collections.EXPECT().Collect(a, a, a, a).Return(article, err).AnyTimes()
	m.collections.EXPECT().Uncollect(a, a, a, a).Return(article, err).AnyTimes()
	m.collections.EXPECT().Articles(a, a, a, a).Return(list, err).AnyTimes()
	m.history.EXPECT().History(a, a, a).Return(list, err).AnyTimes()
	m.hot.EXPECT().Hot(a, a, a).Return(hot, err).AnyTimes()
	m.search.EXPECT().Articles(a, a, a).Return(found, err).AnyTimes()
	m.peopleSearch.EXPECT().Users(a, a, a, a).Return([]domain.Profile{profile}, err).AnyTimes()
	m.tagSearch.EXPECT().Tags(a, a, a).Return(tags, err).AnyTimes()
	m.moderation.EXPECT().SetRole(a, a, a, a).Return(user, err).AnyTimes()
	m.moderation.EXPECT().HideArticle(a, a, a, a).Return(article.Article, err).AnyTimes()
	m.moderation.EXPECT().UnhideArticle(a, a, a, a).Return(article.Article, err).AnyTimes()
	m.moderation.EXPECT().HideComment(a, a, a, a).Return(comment.Comment, err).AnyTimes()
	m.moderation.EXPECT().UnhideComment(a, a, a, a).Return(comment.Comment, err).AnyTimes()
	m.moderation.EXPECT().Suspend(a, a, a, a, a).Return(user, err).AnyTimes()
	m.moderation.EXPECT().Unsuspend(a, a, a, a).Return(user, err).AnyTimes()

	var revs service.RevisionList
	var rev domain.ArticleRevision
	if oc.rich {
		rev = domain.ArticleRevision{ArticleID: 1, Version: 2, Title: "Then", Description: "d", Body: "old", Tags: []string{"dragons"}, CreatedAt: fxTime}
		revs = service.RevisionList{Revisions: []domain.ArticleRevision{rev}, NextBefore: 2}
	}
	m.revisions.EXPECT().List(a, a, a, a, a).Return(revs, err).AnyTimes()
	m.revisions.EXPECT().Get(a, a, a, a).Return(rev, err).AnyTimes()
	m.revisions.EXPECT().Restore(a, a, a, a, a).Return(article, err).AnyTimes()

	var hook domain.Webhook
	var hookSecret string
	var hookDeliveries service.WebhookDeliveryList
	if oc.rich {
		since := fxTime
		hook = domain.Webhook{ID: 7, OwnerID: 1, URL: "https://hooks.example.com/in", Events: []string{domain.WebhookArticlePublished}, Active: true,
			FailingSince: &since, CreatedAt: fxTime, UpdatedAt: fxTime}
		hookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		hookDeliveries = service.WebhookDeliveryList{Items: []domain.WebhookDelivery{{ID: 3, WebhookID: 7, Seq: 2, EventID: "outbox-1",
			EventType: domain.WebhookArticlePublished, Status: domain.WebhookDelivered, Attempts: 1, StatusCode: 200, LatencyMs: 12,
			Response: "ok", CreatedAt: fxTime, AttemptedAt: &since}}, NextBefore: 2}
	}
	m.webhooks.EXPECT().Create(a, a, a, a).Return(hook, hookSecret, err).AnyTimes()
	m.webhooks.EXPECT().List(a, a, a).Return([]domain.Webhook{hook}, err).AnyTimes()
	m.webhooks.EXPECT().Get(a, a, a, a).Return(hook, err).AnyTimes()
	m.webhooks.EXPECT().Update(a, a, a, a, a).Return(hook, err).AnyTimes()
	m.webhooks.EXPECT().Delete(a, a, a, a).Return(err).AnyTimes()
	m.webhooks.EXPECT().Deliveries(a, a, a, a, a, a).Return(hookDeliveries, err).AnyTimes()
	m.webhooks.EXPECT().Redeliver(a, a, a, a, a).Return(err).AnyTimes()
	m.webhooks.EXPECT().Test(a, a, a, a).Return(err).AnyTimes()

	m.notifications.EXPECT().List(a, a, a).Return(notes, err).AnyTimes()
	m.notifications.EXPECT().MarkRead(a, a, a).Return(marked, err).AnyTimes()
	// A stream that opened would never end under the fuzzer (its request is never cancelled): the
	// fuzzed opens are refused by the cap (429) once their input passed (notification_stream_test.go
	// serves real streams).
	streamErr := err
	if streamErr == nil {
		streamErr = service.ErrTooManyStreams
	}
	m.streams.EXPECT().Start(a, a, a, a, a).Return(nil, nil, streamErr).AnyTimes()
	m.streams.EXPECT().RedeemTicket(a, a).DoAndReturn(func(_ context.Context, ticket string) (domain.Credential, error) {
		if err != nil {
			return domain.Credential{}, err
		}
		if ticket == "abc" {
			return domain.Credential{UserID: authedID, SessionID: "sid"}, nil
		}
		return domain.Credential{}, domain.ErrUnauthorized
	}).AnyTimes()
	m.streams.EXPECT().IssueTicket(a, a).Return("a-ticket", fxTime, err).AnyTimes()
	m.streams.EXPECT().Config().Return(service.DefaultNotificationStreamConfig()).AnyTimes()

	var sitemapPages int
	var sitemapPage domain.SitemapPage
	if oc.rich {
		sitemapPages = 2
		sitemapPage = domain.SitemapPage{LastMod: fxTime, Entries: []domain.SitemapEntry{{Loc: "https://blog.example/article/how-to-train-your-dragon", LastMod: fxTime}}}
	}
	m.sitemaps.EXPECT().Pages(a).Return(sitemapPages, err).AnyTimes()
	m.sitemaps.EXPECT().Page(a, a).Return(sitemapPage, err).AnyTimes()
	m.sitemaps.EXPECT().Links().Return(fxLinks).AnyTimes()

	var feed domain.Feed
	if oc.rich {
		feed = domain.Feed{Title: "Articles", Link: "https://blog.example/", Updated: fxTime, Stamp: 7,
			Entries: []domain.FeedEntry{{Article: article.Article, Author: "jake", Link: fxLinks.Article(article.Slug)}}}
	}
	m.feeds.EXPECT().Feed(a, a).Return(feed, err).AnyTimes()
	m.feeds.EXPECT().Links().Return(fxLinks).AnyTimes()

	m.media.EXPECT().Presign(a, a).Return("", err).AnyTimes()
	m.media.EXPECT().Open(a, a).Return(domain.MediaObject{}, domain.ErrNotFound).AnyTimes()

	var start service.SignInStart
	var providers []service.ProviderInfo
	var idents []domain.UserIdentity
	callback := ""
	if oc.rich {
		start = service.SignInStart{AuthorizationURL: "https://accounts.example.com/auth?client_id=inkwell&state=s", Cookie: "cookie"}
		providers = []service.ProviderInfo{{Name: "google", DisplayName: "Google", Available: true}}
		idents = []domain.UserIdentity{{ID: 3, UserID: authedID, Provider: "google", Subject: "1", Email: "jake@jake.jake", CreatedAt: fxTime, LastUsedAt: fxTime}}
		callback = "https://app.example.com/signed-in?code=one-time"
	}
	m.signIn.EXPECT().Providers().Return(providers).AnyTimes()
	m.signIn.EXPECT().Start(a, a, a, a).Return(start, err).AnyTimes()
	m.signIn.EXPECT().StartLink(a, a, a, a, a, a).Return(start, err).AnyTimes()
	m.signIn.EXPECT().Callback(a, a, a, a, a, a).Return(callback, err).AnyTimes()
	m.signIn.EXPECT().Exchange(a, a).Return(session, err).AnyTimes()
	m.signIn.EXPECT().Identities(a, a).Return(idents, err).AnyTimes()
	m.signIn.EXPECT().Unlink(a, a, a).Return(err).AnyTimes()

	m.codeLogin.EXPECT().Send(a, a, a).Return(err).AnyTimes()
	m.codeLogin.EXPECT().Login(a, a, a, a).Return(session, err).AnyTimes()
	m.codeLogin.EXPECT().SendStepUpCode(a, a).Return(err).AnyTimes()

	m.account.EXPECT().SendVerification(a, a).Return(err).AnyTimes()
	m.account.EXPECT().VerifyEmail(a, a, a).Return(user, err).AnyTimes()
	m.account.EXPECT().RequestPasswordReset(a, a).Return(err).AnyTimes()
	m.account.EXPECT().ConfirmPasswordReset(a, a, a, a).Return(err).AnyTimes()

	m.sessions.EXPECT().Refresh(a, a).Return(uid, tokens, err).AnyTimes()
	m.sessions.EXPECT().Logout(a, a, a).Return(err).AnyTimes()
	m.sessions.EXPECT().CreateAPIKey(a, a, a, a).Return(key, secret, err).AnyTimes()
	m.sessions.EXPECT().ListSessions(a, a).Return(nil, err).AnyTimes()
	m.sessions.EXPECT().RevokeSession(a, a, a).Return(err).AnyTimes()
	m.sessions.EXPECT().ListAPIKeys(a, a).Return(keys, err).AnyTimes()
	m.sessions.EXPECT().RevokeAPIKey(a, a, a).Return(err).AnyTimes()

	m.reports.EXPECT().File(a, a, a).Return(report, oc.rich, err).AnyTimes()

	var upload domain.Upload
	var uploads service.UploadList
	if oc.rich {
		upload = fxUpload
		uploads = service.UploadList{Uploads: []domain.Upload{fxUpload}, NextCursor: fxCursor}
	}
	m.uploads.EXPECT().MaxBytes().Return(int64(10 << 20)).AnyTimes()
	m.uploads.EXPECT().Upload(a, a, a, a).Return(upload, err).AnyTimes()
	m.uploads.EXPECT().List(a, a, a).Return(uploads, err).AnyTimes()
	m.uploads.EXPECT().Delete(a, a, a).Return(err).AnyTimes()
	m.reports.EXPECT().Queue(a, a, a, a).Return(queue, err).AnyTimes()
	m.reports.EXPECT().Resolve(a, a, a, a, a).Return(mcase, err).AnyTimes()
	m.reports.EXPECT().ModerationLog(a, a, a).Return(modlog, err).AnyTimes()

	// A keyed create: the stored answer's kinds of outcome, the fresh one rendered by the handler.
	keyed := func(render func() domain.StoredResponse) (domain.StoredResponse, bool, error) {
		switch mode.idem() {
		case idemInFlight:
			return domain.StoredResponse{}, false, domain.ErrIdempotencyInFlight
		case idemMismatch:
			return domain.StoredResponse{}, false, domain.ErrIdempotencyMismatch
		default:
			return render(), mode.idem() == idemReplayed, nil
		}
	}
	m.users.EXPECT().RegisterIdempotent(a, a, a).DoAndReturn(
		func(_ context.Context, _ service.RegisterInput, idem service.Idempotent[service.Session]) (domain.StoredResponse, bool, error) {
			return keyed(func() domain.StoredResponse { return idem.Render(session, err) })
		}).AnyTimes()
	m.articles.EXPECT().CreateIdempotent(a, a, a, a).DoAndReturn(
		func(_ context.Context, _ int64, _ service.CreateArticleInput, idem service.Idempotent[domain.ArticleView]) (domain.StoredResponse, bool, error) {
			return keyed(func() domain.StoredResponse { return idem.Render(article, err) })
		}).AnyTimes()
	m.comments.EXPECT().AddIdempotent(a, a, a, a, a, a).DoAndReturn(
		func(_ context.Context, _ int64, _, _ string, _ int64, idem service.Idempotent[domain.CommentView]) (domain.StoredResponse, bool, error) {
			return keyed(func() domain.StoredResponse { return idem.Render(comment, err) })
		}).AnyTimes()
	m.limiter.EXPECT().Allow(a, a, a, a).DoAndReturn(func(_ context.Context, _ string, limit int, _ time.Duration) (domain.RateDecision, error) {
		switch {
		case mode&modeRateFails != 0:
			return domain.RateDecision{}, errors.New("redis: connection refused")
		case mode&modeRateDenied != 0:
			return domain.RateDecision{Allowed: false, Limit: limit, Remaining: 0, Reset: 1500 * time.Millisecond}, nil
		default:
			return domain.RateDecision{Allowed: true, Limit: limit, Remaining: limit - 1, Reset: 30 * time.Second}, nil
		}
	}).AnyTimes()

	rule := func(name string) web.RateRule { return web.RateRule{Name: name, Limit: 10, Window: time.Minute} }
	logger := slog.New(slog.DiscardHandler)
	return web.NewRouter(web.RouterConfig{MaxBodyBytes: fuzzMaxBody, RateLimits: web.RateLimits{Auth: rule("auth"), Writes: rule("writes")}},
		logger, m.handlers(logger))
}

// argLog is a matcher that matches anything and records it: the arguments the services got.
type argLog struct {
	mu   sync.Mutex
	args []any
}

func (l *argLog) Matches(x any) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.args = append(l.args, x)
	return true
}

func (l *argLog) String() string { return "is anything (recorded)" }

// JSON renders the recorded arguments, contexts and functions left out.
func (l *argLog) JSON() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for _, x := range l.args {
		if _, ok := x.(context.Context); ok {
			continue
		}
		if b, err := json.Marshal(x); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, " ")
}

// mockBits are the mode bits the mocks read; the others only shape the request.
const mockBits = outcomeMask | idemMask | modeRateDenied | modeRateFails

// fuzzRouters caches a router per mock configuration. Building the mocks costs a stack walk per
// expectation, far more than serving a request, so a fuzz run builds each configuration once.
// Requests through the cache are served one at a time; mock failures go to the current test.
var fuzzRouters = struct {
	sync.Mutex
	byMode map[fuzzMode]http.Handler
	cur    *testing.T
}{byMode: map[fuzzMode]http.Handler{}}

// fuzzReporter reports to the test whose request fuzzRouters is serving.
type fuzzReporter struct{}

func (fuzzReporter) Errorf(format string, args ...any) { fuzzRouters.cur.Errorf(format, args...) }
func (fuzzReporter) Fatalf(format string, args ...any) { fuzzRouters.cur.Fatalf(format, args...) }

// serveFuzz sends one request, built without URL parsing so any path and query reach the router.
// With args set, it uses a router of its own whose services record the arguments they get.
func serveFuzz(t *testing.T, mode fuzzMode, method, path, rawQuery string, body []byte, args *argLog) *httptest.ResponseRecorder {
	t.Helper()
	if mode&modeOversized != 0 && len(body) > 0 {
		body = append(slices.Clip(body), bytes.Repeat([]byte(" "), fuzzMaxBody)...)
	}
	req := httptest.NewRequest(method, "/", bytes.NewReader(body))
	req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", rawQuery
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	if mode&modeChunked != 0 {
		req.ContentLength = -1
	}
	switch {
	case mode&modeAnonymous != 0:
	case mode&modeBadAuth != 0:
		req.Header.Set("Authorization", "Bearer")
	default:
		req.Header.Set("Authorization", "Token TOKEN")
	}
	if mode&modeIdemKey != 0 {
		k := "fuzz-key"
		if mode&modeLongKey != 0 {
			k = strings.Repeat("k", 256)
		}
		req.Header.Set("Idempotency-Key", k)
	}
	rec := httptest.NewRecorder()
	if args != nil {
		newFuzzRouter(t, mode, args).ServeHTTP(rec, req)
		return rec
	}
	fuzzRouters.Lock()
	defer fuzzRouters.Unlock()
	fuzzRouters.cur = t
	router, ok := fuzzRouters.byMode[mode&mockBits]
	if !ok {
		router = newFuzzRouter(fuzzReporter{}, mode&mockBits, nil)
		fuzzRouters.byMode[mode&mockBits] = router
	}
	router.ServeHTTP(rec, req)
	return rec
}

// checkFuzzResponse fails on a 5xx, on an error body not in the RealWorld shape, on a 429 without
// Retry-After and on a success body that is not the JSON it claims. With opKey set and the
// services succeeding, it also fails on a status the document does not list for the operation.
func checkFuzzResponse(t *testing.T, req string, rec *httptest.ResponseRecorder, mode fuzzMode, opKey string) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("%s: status %d; body %s", req, rec.Code, rec.Body)
	}
	ct := rec.Header().Get("Content-Type")
	if rec.Code == http.StatusNotFound && (strings.HasPrefix(ct, "application/atom+xml") || strings.HasPrefix(ct, "application/rss+xml")) {
		// A feed's 404 is in the feed's own type (a feed reader shows no JSON): a small XML body.
		if err := xml.Unmarshal(rec.Body.Bytes(), new(struct{})); err != nil {
			t.Fatalf("%s: 404 as %q with a body that is not XML: %s", req, ct, rec.Body)
		}
	} else if rec.Code >= 400 {
		if !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("%s: status %d with Content-Type %q; body %s", req, rec.Code, ct, rec.Body)
		}
		var body struct {
			Errors map[string][]string `json:"errors"`
		}
		dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil || len(body.Errors) == 0 {
			t.Fatalf("%s: status %d body %s is not {\"errors\":{field:[messages]}} (%v)", req, rec.Code, rec.Body, err)
		}
		for field, msgs := range body.Errors {
			if field == "" || len(msgs) == 0 || slices.Contains(msgs, "") {
				t.Fatalf("%s: status %d: empty field or message in %s", req, rec.Code, rec.Body)
			}
		}
	}
	if rec.Code == http.StatusTooManyRequests && rec.Header().Get("Retry-After") == "" {
		t.Fatalf("%s: 429 without Retry-After", req)
	}
	if rec.Code < 300 && strings.HasPrefix(ct, "application/json") && !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("%s: status %d body is not JSON: %q", req, rec.Code, rec.Body)
	}
	if opKey != "" && mode.outcome().err == nil {
		d := mustOpenAPI(t)
		o, ok := d.byKey[opKey]
		if !ok {
			t.Fatalf("%s: %s is not in %s", req, opKey, openAPIFile)
		}
		if !d.statuses(o)[rec.Code] {
			t.Fatalf("%s: status %d is not documented for %s (documented: %v); body %s",
				req, rec.Code, opKey, slices.Sorted(maps.Keys(d.statuses(o))), rec.Body)
		}
	}
}

// defaultPathValues name things that exist as far as the mocks are concerned.
var defaultPathValues = map[string]string{"slug": "how-to-train-your-dragon", "id": "3", "version": "2", "username": "jake", "file": "articles-1.xml", "provider": "google"}

// concretePath substitutes values for the {params} of a template.
func concretePath(template string, values map[string]string) string {
	for k, v := range values {
		template = strings.ReplaceAll(template, "{"+k+"}", v)
	}
	return template
}

func splitKey(key string) (method, template string) {
	method, template, _ = strings.Cut(key, " ")
	return method, template
}

// bodyRoute is an operation that reads a JSON body, with its seed bodies. The good ones are well
// formed and, together, use every field the document declares, each with a value that must reach
// the service (TestOpenAPIRequestBodiesMatchHandlers); the bad ones are edge cases.
type bodyRoute struct {
	key       string
	good, bad []string
}

var bodyRoutes = []bodyRoute{
	{"POST /api/users",
		[]string{`{"user":{"username":"jake","email":"jake@jake.jake","password":"jakejake"}}`},
		[]string{`{"user":{"username":"","email":"not-an-email","password":"1"}}`}},
	{"POST /api/users/login",
		[]string{`{"user":{"email":"jake@jake.jake","password":"jakejake"}}`},
		[]string{`{"user":{"email":["jake@jake.jake"],"password":{"x":1}}}`}},
	{"POST /api/users/login/code/send",
		[]string{`{"email":"jake@jake.jake"}`, `{"phone":"+4915112345678"}`, `{"user":{"email":"jane@jane.jane","phone":"+4915100000000"}}`},
		[]string{`{"email":"jake@jake.jake","phone":"+4915112345678","user":null}`, `{"user":"jake"}`}},
	{"POST /api/users/login/code",
		[]string{`{"email":"jake@jake.jake","code":"123456"}`, `{"phone":"+4915112345678","code":"654321"}`,
			`{"user":{"email":"jane@jane.jane","phone":"+4915100000000","code":"111222"}}`},
		[]string{`{"user":{"phone":"+4915112345678","code":"12345x"}}`, `{"code":123456}`}},
	{"POST /api/users/password/reset",
		[]string{`{"user":{"email":"jake@jake.jake"}}`},
		[]string{`{"user":{"email":""}}`, `{"user":{"email":["jake@jake.jake"]}}`, `{"user":"jake"}`}},
	{"POST /api/users/password/reset/confirm",
		[]string{`{"user":{"email":"jake@jake.jake","code":"ABCDE-23456","password":"new-password-123"}}`},
		[]string{`{"user":{"email":"jake@jake.jake","code":"","password":""}}`, `{"user":{"code":123}}`}},
	{"POST /api/user/email/verify",
		[]string{`{"user":{"code":"ABCDE-23456"}}`},
		[]string{`{"user":{"code":""}}`, `{"user":{"code":["x"]}}`, `{"user":null}`}},
	{"POST /api/users/refresh",
		[]string{`{"refreshToken":"refresh-token"}`},
		[]string{`{"refreshToken":""}`, `{"refreshToken":null}`, `{"refreshToken":7}`}},
	{"PUT /api/user",
		[]string{`{"user":{"email":"jake@jake.jake","username":"jake","password":"new-password-123","bio":"I like to skateboard","image":"https://i.stack.imgur.com/xHWG8.jpg","currentPassword":"old-password-123"}}`,
			`{"user":{"password":"new-password-123","code":"123456"}}`},
		[]string{`{"user":{"password":""}}`, `{"user":{"bio":null,"image":null}}`, `{"user":{"bio":1}}`}},
	{"POST /api/users/logout",
		[]string{`{"all":true}`},
		[]string{`{"all":"yes"}`, `{}`}},
	{"POST /api/user/notifications/read",
		[]string{`{"ids":[11,12,13]}`},
		[]string{`{"ids":[]}`, `{"ids":[-1,0,9223372036854775807]}`, `{"ids":[9223372036854775808]}`}},
	{"POST /api/user/api-keys",
		[]string{`{"apiKey":{"name":"deploy-bot","scopes":["read","write"]}}`},
		[]string{`{"apiKey":{"name":""}}`, `{"apiKey":"ci"}`}},
	{"POST /api/articles",
		[]string{`{"article":{"title":"How to train your dragon","description":"Ever wonder how?","body":"You have to believe","tagList":["reactjs","angularjs","dragons"],"draft":true}}`},
		[]string{`{"article":{"title":"t","description":"d","body":"b","tagList":null,"draft":"yes"}}`, `{"article":{"tagList":[1,2]}}`}},
	{"PUT /api/articles/{slug}",
		[]string{`{"article":{"title":"Did you train your dragon?","description":"Yes","body":"With a Jacobian","tagList":["dragons"],"version":41}}`},
		[]string{`{"article":{"tagList":[],"body":""}}`, `{"article":{"version":2147483648}}`, `{"article":{"version":-1.5}}`}},
	{"POST /api/articles/{slug}/comments",
		[]string{`{"comment":{"body":"Thank you so much!"}}`, `{"comment":{"body":"Indeed","parentId":7}}`},
		[]string{`{"comment":{"body":""}}`, `{"comment":{"body":"\u0000\ud800"}}`, `{"comment":{"body":"x","parentId":0}}`, `{"comment":{"body":"x","parentId":"7"}}`}},
	{"PUT /api/articles/{slug}/comments/{id}",
		[]string{`{"comment":{"body":"Thank you so much, edited"}}`},
		[]string{`{"comment":{"body":""}}`, `{"comment":{"body":"\u0000"}}`, `{"comment":{"body":["x"]}}`}},
	{"POST /api/articles/{slug}/schedule",
		[]string{`{"publishAt":"2030-01-02T15:04:05Z"}`},
		[]string{`{"publishAt":""}`, `{"publishAt":7}`, `{"publishAt":"\u0000"}`, `{"publishAt":null}`}},
	{"POST /api/articles/{slug}/collect",
		[]string{`{"collectionId":31337}`},
		[]string{`{"collectionId":0}`, `{"collectionId":"3"}`, `{"collectionId":1e400}`}},
	{"DELETE /api/articles/{slug}/collect",
		[]string{`{"collectionId":31337}`},
		[]string{`{"collectionId":-3}`, `{"collectionId":3.5}`}},
	{"POST /api/collections",
		[]string{`{"collection":{"name":"later","description":"read later"}}`},
		[]string{`{"collection":{"name":""}}`, `{"collection":{"name":7}}`}},
	{"PUT /api/admin/users/{username}/role",
		[]string{`{"role":"moderator"}`},
		[]string{`{"role":""}`, `{"role":7}`, `{"role":"root"}`}},
	{"POST /api/moderation/articles/{slug}/hide",
		[]string{`{"reason":"spam links"}`},
		[]string{`{"reason":""}`, `{"reason":7}`}},
	{"POST /api/moderation/articles/{slug}/unhide",
		[]string{`{"reason":"appeal accepted"}`},
		[]string{`{"reason":null}`, `{"reason":[]}`}},
	{"POST /api/moderation/comments/{id}/hide",
		[]string{`{"reason":"rude"}`},
		[]string{`{"reason":""}`, `{"reason":{}}`}},
	{"POST /api/moderation/comments/{id}/unhide",
		[]string{`{"reason":"fine after all"}`},
		[]string{`{"reason":false}`}},
	{"POST /api/moderation/users/{username}/suspend",
		[]string{`{"reason":"spam","until":"2030-01-02T03:04:05Z"}`, `{"reason":"spam","until":null}`},
		[]string{`{"reason":"spam","until":"tomorrow"}`, `{"until":7}`}},
	{"POST /api/moderation/users/{username}/unsuspend",
		[]string{`{"reason":"appeal accepted"}`},
		[]string{`{"reason":1}`}},
	{"PATCH /api/collections/{id}",
		[]string{`{"collection":{"name":"renamed","description":"still later"}}`},
		[]string{`{"collection":{"description":null}}`, `{"collection":{}}`}},
	// Not JSON: a multipart body (415 for these JSON seeds; web/media_test.go sends multipart).
	{"POST /api/auth/oidc/{provider}/start",
		[]string{`{"redirect":"https://app.example.com/signed-in","password":"jakejake","code":"123456"}`},
		[]string{`{"redirect":"javascript:alert(1)","link":true}`, `{"link":"yes"}`, `{}`}},
	{"POST /api/auth/oidc/exchange",
		[]string{`{"code":"one-time"}`},
		[]string{`{"code":7}`, `{"code":""}`, `{"code":"\u0000"}`}},
	{"POST /api/uploads",
		[]string{`{"file":"iVBORw0KGgo="}`},
		[]string{`{}`}},
	{"POST /api/reports",
		[]string{`{"report":{"article":"how-to-train-your-dragon","comment":31337,"reason":"spam","note":"buy pills"}}`, `{"report":{"user":"spammer","reason":"abuse"}}`},
		[]string{`{"report":{"comment":"3","reason":7}}`, `{"report":{"comment":-1,"note":"\u0000"}}`, `{"report":null}`}},
	{"POST /api/articles/{slug}/revisions/{version}/restore",
		[]string{`{"version":4}`},
		[]string{`{"version":"4"}`, `{"version":-1}`, `{"version":4294967296}`, `{"version":null}`}},
	{"POST /api/user/webhooks",
		[]string{`{"webhook":{"url":"https://hooks.example.com/in","events":["article.published"]}}`},
		[]string{`{"webhook":{"url":7}}`, `{"webhook":{"events":"article.published"}}`, `{"webhook":null}`}},
	{"PATCH /api/user/webhooks/{id}",
		[]string{`{"webhook":{"url":"https://hooks.example.com/v2","events":["article.updated"],"active":false}}`, `{"webhook":{"active":true}}`},
		[]string{`{"webhook":{"active":"no"}}`}},
	{"POST /api/admin/webhooks",
		[]string{`{"webhook":{"url":"https://hooks.example.com/in","events":["article.published"]}}`},
		[]string{`{"webhook":{"url":["x"]}}`}},
	{"PATCH /api/admin/webhooks/{id}",
		[]string{`{"webhook":{"url":"https://hooks.example.com/v2","events":["article.withdrawn"],"active":true}}`},
		[]string{`{"webhook":{"events":[7]}}`}},
	{"POST /api/moderation/reports/{id}/resolve",
		[]string{`{"action":"hide","reason":"spam wave"}`},
		[]string{`{"action":"delete"}`, `{"action":7,"reason":["x"]}`, `{}`}},
}

func bodyRouteFor(key string) (bodyRoute, bool) {
	i := slices.IndexFunc(bodyRoutes, func(r bodyRoute) bool { return r.key == key })
	if i < 0 {
		return bodyRoute{}, false
	}
	return bodyRoutes[i], true
}

// genericBodies are malformed or surprising bodies every JSON route gets as seeds.
var genericBodies = []string{
	"", " ", "{}", "null", "[]", `"user"`, "0", "true", "-", "{", `{"a":`, "{} {}", "{}garbage", "{}\n\n",
	`{"user":null}`, `{"user":[]}`, `{"user":"x"}`, `{"article":7}`, `{"comment":{"body":["x"]}}`,
	`{"user":{"email":"a","email":"b"}}`, `{"ids":"all"}`, `{"ids":[1.5]}`, `{"ids":[null]}`,
	"\xff\xfe\xfd", `{"user":{"email":"\ud800"}}`, `{"\u0000":1}`,
	strings.Repeat("[", 3000), strings.Repeat(`{"a":`, 700) + "1" + strings.Repeat("}", 700),
	`{"collectionId":99999999999999999999}`, `{"article":{"version":1e10}}`,
	// Text PostgreSQL cannot store, and text that is merely huge: raw NUL, an overlong "/", a
	// UTF-8-encoded surrogate, a lone surrogate escape, a 1 MiB string.
	"{\"article\":{\"title\":\"a\x00b\"}}", "{\"user\":{\"bio\":\"\xc0\xaf\"}}", "{\"comment\":{\"body\":\"\xed\xa0\x80\"}}",
	`{"article":{"title":"\udfff","body":"\ud800\u0000"}}`, `{"article":{"body":"` + oneMiB + `"}}`,
}

// oneMiB is a 1 MiB string of text: over the body limit, so it must stop there as a 413.
var oneMiB = strings.Repeat("x", 1<<20)

type jsonInput struct {
	route uint8
	mode  fuzzMode
	body  string
}

// jsonMatrix is every seed body of every JSON route under every mode that matters: the
// well-formed body under each conformance mode and each service error, the other seeds and the
// generic bodies with and without a Content-Length. TestFuzzJSONBodiesSeedMatrix runs it all.
func jsonMatrix() []jsonInput {
	var in []jsonInput
	for i, r := range bodyRoutes {
		for _, mode := range conformanceModes {
			in = append(in, jsonInput{uint8(i), mode, r.good[0]})
		}
		for o := 2; o < len(fuzzOutcomes); o++ {
			in = append(in, jsonInput{uint8(i), fuzzMode(o), r.good[0]})
		}
		for _, b := range append(slices.Clone(r.good[1:]), r.bad...) {
			in = append(in, jsonInput{uint8(i), outcomeRich, b}, jsonInput{uint8(i), outcomeZero | modeChunked | modeIdemKey, b})
		}
		for _, b := range genericBodies {
			in = append(in, jsonInput{uint8(i), outcomeRich, b}, jsonInput{uint8(i), outcomeZero | modeChunked, b})
		}
	}
	return in
}

// jsonCorpus is FuzzJSONBodies' seed corpus: each route's seeds once, the generic bodies spread
// over the routes. It is kept small because the fuzzing engine replays the whole corpus before it
// starts mutating, at a few dozen inputs a second for a binary this size.
func jsonCorpus() []jsonInput {
	var in []jsonInput
	for i, r := range bodyRoutes {
		in = append(in, jsonInput{uint8(i), outcomeRich | modeIdemKey, r.good[0]})
		for j, b := range append(slices.Clone(r.good[1:]), r.bad...) {
			in = append(in, jsonInput{uint8(i), conformanceModes[j%len(conformanceModes)], b})
		}
	}
	for j, b := range genericBodies {
		in = append(in, jsonInput{uint8(j % len(bodyRoutes)), outcomeZero | modeChunked, b})
	}
	return in
}

// FuzzJSONBodies sends arbitrary bytes as the body of every operation that reads JSON.
func FuzzJSONBodies(f *testing.F) {
	for _, in := range jsonCorpus() {
		f.Add(in.route, uint16(in.mode), []byte(in.body))
	}
	f.Fuzz(checkJSONBody)
}

func TestFuzzJSONBodiesSeedMatrix(t *testing.T) {
	t.Parallel()
	for _, in := range jsonMatrix() {
		checkJSONBody(t, in.route, uint16(in.mode), []byte(in.body))
	}
}

func checkJSONBody(t *testing.T, route uint8, mode uint16, body []byte) {
	r := bodyRoutes[int(route)%len(bodyRoutes)]
	method, template := splitKey(r.key)
	m := fuzzMode(mode)
	rec := serveFuzz(t, m, method, concretePath(template, defaultPathValues), "", body, nil)
	checkFuzzResponse(t, fmt.Sprintf("%s mode %#x body %q", r.key, mode, truncate(body)), rec, m, r.key)
}

// queryRoutes are the operations that read query parameters.
var queryRoutes = []string{
	"GET /api/articles",
	"GET /api/articles/feed",
	"GET /api/articles/hot",
	"GET /api/user/articles",
	"GET /api/user/history",
	"GET /api/user/notifications",
	"GET /api/user/notifications/stream",
	"GET /api/user/blocks",
	"GET /api/user/uploads",
	"GET /api/user/webhooks/{id}/deliveries",
	"GET /api/admin/webhooks/{id}/deliveries",
	"GET /api/articles/{slug}/comments",
	"GET /api/articles/{slug}/revisions",
	"GET /api/collections/{id}/articles",
	"DELETE /api/articles/{slug}/collect",
	"GET /api/search/articles",
	"GET /api/search/users",
	"GET /api/search/tags",
	"GET /api/moderation/reports",
	"GET /api/moderation/log",
	"GET /api/auth/oidc/{provider}/start",
	"GET /api/auth/oidc/{provider}/callback",
}

// fuzzedQueryNames are the query parameters FuzzQueryParams sets by name, or (the sign-in
// flow's: redirect, link, state, code, error) through its extra query.
var fuzzedQueryNames = []string{"limit", "offset", "cursor", "after", "status", "tag", "author", "favorited", "collectionId", "q", "suggest",
	"redirect", "link", "state", "code", "error", "parent", "ticket", "lastEventId"}

type queryValues struct {
	limit, offset, cursor, after, status, tag, author, favorited, collectionID, extra, q, suggest string
}

func rawCursor(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

var querySeeds = []queryValues{
	{},
	{limit: "20", offset: "0"},
	{limit: "1", offset: "100000", tag: "dragons", author: "jake", favorited: "jane"},
	{limit: "100", cursor: rawCursor("1795924924902000:1"), status: "draft"},
	{status: "published", after: "0", collectionID: "3"},
	{status: "withdrawn", after: "9007199254740992", limit: "1000"},
	{limit: "0"}, {limit: "101"}, {limit: "-1"}, {limit: "abc"}, {limit: "1e2"}, {limit: " 20"}, {limit: "99999999999999999999"},
	{offset: "-1"}, {offset: "100001"}, {offset: "0x10"},
	{cursor: "!!!"}, {cursor: rawCursor("a:b")}, {cursor: rawCursor("1:0")}, {cursor: rawCursor("1:-5")}, {cursor: rawCursor("nocolon")},
	{cursor: rawCursor("-9223372036854775808:9223372036854775807")}, {cursor: rawCursor("9223372036854775807:1")}, {cursor: "===="},
	{after: "-1"}, {after: "9007199254740993"}, {after: "x"},
	{status: "bogus"}, {status: "DRAFT"}, {status: "draft,published"}, {status: "open"}, {status: "resolved", limit: "2"},
	{collectionID: "abc"}, {collectionID: "-5"}, {collectionID: "0"}, {collectionID: "99999999999999999999"},
	{tag: "\x00", author: "%", favorited: strings.Repeat("x", 2000)},
	{tag: "\xc0\xaf", author: "\xed\xa0\x80", favorited: `\ud800`}, {tag: oneMiB}, {author: "a\x00", extra: "favorited=%c0%af"},
	{extra: "limit="}, {extra: "limit=5&limit=500"}, {extra: "cursor=&offset="}, {extra: "a;b=c&%zz=1"}, {extra: "status=draft&status=bogus"},
	{extra: "collectionId="}, {extra: "&&&==&"},
	{extra: "parent=7", after: "3"}, {extra: "parent=0"}, {extra: "parent=x"}, {extra: "parent=-1&limit=5"}, {extra: "parent=99999999999999999999"},
	{q: "dragons", limit: "5", tag: "dragons", author: "jake"}, {q: `"a b" -c or d`, suggest: "false"},
	{q: "   "}, {q: "\x00"}, {q: "\xc0\xaf"}, {q: strings.Repeat("x", 257)}, {q: strings.Repeat("缓", 256)}, {q: "x", suggest: "maybe"},
	{q: "x", cursor: rawCursor("s2:1795924924902000:3:0.5:9:1")}, {q: "x", cursor: rawCursor("s2:1:3:NaN:9:1")}, {q: "x", cursor: rawCursor("s1:1795924924902000:0.5:9:1")}, {q: "x", cursor: rawCursor("1795924924902000:1")},
	{q: "x", extra: "q=y&q="}, {q: `' & | ! ( ) :* <-> \\`},
	{q: "ali"}, {q: " \t "}, {q: `%_\`}, {q: strings.Repeat("é", 257)}, {q: "a\x00"}, {q: "\xc0\xaf", limit: "100"},
	{q: `"unbalanced -or OR | & ! ( :*`}, {extra: "q=%zz"},
	{extra: "redirect=https%3A%2F%2Fapp.example.com%2Fsigned-in"}, {extra: "redirect=javascript:alert(1)&link=true"},
	{extra: "ticket=abc"}, {extra: "lastEventId=5"}, {extra: "lastEventId=-1&ticket="}, {extra: "lastEventId=1e3&ticket=%00"},
	{extra: "state=s&code=c"}, {extra: "state=s&error=access_denied"}, {extra: "state=&code=&error="}, {extra: "state=%00&code=%c0%af"},
}

type queryInput struct {
	route uint8
	mode  fuzzMode
	q     queryValues
}

// queryMatrix is every query seed on every query route, signed in and anonymous.
func queryMatrix() []queryInput {
	var in []queryInput
	for i := range queryRoutes {
		for _, q := range querySeeds {
			in = append(in, queryInput{uint8(i), outcomeRich, q}, queryInput{uint8(i), outcomeZero | modeAnonymous, q})
		}
		in = append(in, queryInput{uint8(i), fuzzMode(2), queryValues{}}) // not found
	}
	return in
}

// queryCorpus is FuzzQueryParams' seed corpus: each query seed once, spread over the routes, and
// the well-formed ones on every route.
func queryCorpus() []queryInput {
	var in []queryInput
	for i := range queryRoutes {
		in = append(in, queryInput{uint8(i), outcomeRich, querySeeds[1]}, queryInput{uint8(i), outcomeRich, querySeeds[3]})
	}
	for j, q := range querySeeds {
		in = append(in, queryInput{uint8(j % len(queryRoutes)), outcomeZero, q})
	}
	return in
}

// FuzzQueryParams sends arbitrary values for every query parameter to every operation that reads
// one (each operation gets all of them; it ignores the ones it does not read).
func FuzzQueryParams(f *testing.F) {
	for _, in := range queryCorpus() {
		q := in.q
		f.Add(in.route, uint16(in.mode), q.limit, q.offset, q.cursor, q.after, q.status, q.tag, q.author, q.favorited, q.collectionID, q.extra, q.q, q.suggest)
	}
	f.Fuzz(checkQueryParams)
}

func TestFuzzQueryParamsSeedMatrix(t *testing.T) {
	t.Parallel()
	for _, in := range queryMatrix() {
		q := in.q
		checkQueryParams(t, in.route, uint16(in.mode), q.limit, q.offset, q.cursor, q.after, q.status, q.tag, q.author, q.favorited, q.collectionID, q.extra, q.q, q.suggest)
	}
}

func checkQueryParams(t *testing.T, route uint8, mode uint16, limit, offset, cursor, after, status, tag, author, favorited, collectionID, extra, search, suggest string) {
	key := queryRoutes[int(route)%len(queryRoutes)]
	method, template := splitKey(key)
	q := url.Values{}
	for name, v := range map[string]string{"limit": limit, "offset": offset, "cursor": cursor, "after": after, "status": status,
		"tag": tag, "author": author, "favorited": favorited, "collectionId": collectionID, "q": search, "suggest": suggest} {
		if v != "" {
			q.Set(name, v)
		}
	}
	raw := q.Encode()
	if extra != "" {
		raw += "&" + extra
	}
	var body []byte
	if r, ok := bodyRouteFor(key); ok {
		body = []byte(r.good[0])
	}
	m := fuzzMode(mode)
	rec := serveFuzz(t, m, method, concretePath(template, defaultPathValues), raw, body, nil)
	checkFuzzResponse(t, fmt.Sprintf("%s?%s mode %#x", key, raw, mode), rec, m, key)
}

// pathRoutes are the operations with path parameters.
var pathRoutes = []string{
	"GET /api/auth/oidc/{provider}/start",
	"POST /api/auth/oidc/{provider}/start",
	"GET /api/auth/oidc/{provider}/callback",
	"DELETE /api/user/identities/{id}",
	"DELETE /api/uploads/{id}",
	"GET /api/user/webhooks/{id}",
	"PATCH /api/user/webhooks/{id}",
	"DELETE /api/user/webhooks/{id}",
	"GET /api/user/webhooks/{id}/deliveries",
	"POST /api/user/webhooks/{id}/deliveries/{delivery}/redeliver",
	"POST /api/user/webhooks/{id}/test",
	"GET /api/admin/webhooks/{id}",
	"PATCH /api/admin/webhooks/{id}",
	"DELETE /api/admin/webhooks/{id}",
	"GET /api/admin/webhooks/{id}/deliveries",
	"POST /api/admin/webhooks/{id}/deliveries/{delivery}/redeliver",
	"POST /api/admin/webhooks/{id}/test",
	"DELETE /api/user/api-keys/{id}",
	"DELETE /api/user/sessions/{id}",
	"GET /api/profiles/{username}",
	"POST /api/profiles/{username}/follow",
	"DELETE /api/profiles/{username}/follow",
	"POST /api/profiles/{username}/block",
	"DELETE /api/profiles/{username}/block",
	"GET /api/articles/{slug}",
	"PUT /api/articles/{slug}",
	"DELETE /api/articles/{slug}",
	"POST /api/articles/{slug}/publish",
	"POST /api/articles/{slug}/withdraw",
	"POST /api/articles/{slug}/schedule",
	"DELETE /api/articles/{slug}/schedule",
	"POST /api/articles/{slug}/favorite",
	"DELETE /api/articles/{slug}/favorite",
	"GET /api/articles/{slug}/comments",
	"POST /api/articles/{slug}/comments",
	"PUT /api/articles/{slug}/comments/{id}",
	"DELETE /api/articles/{slug}/comments/{id}",
	"GET /api/articles/{slug}/revisions",
	"GET /api/articles/{slug}/revisions/{version}", // the id stands in for the version
	"POST /api/articles/{slug}/revisions/{version}/restore",
	"POST /api/articles/{slug}/collect",
	"DELETE /api/articles/{slug}/collect",
	"PATCH /api/collections/{id}",
	"DELETE /api/collections/{id}",
	"GET /api/collections/{id}/articles",
	"POST /api/moderation/reports/{id}/resolve",
	"GET /api/docs/{asset}",     // the slug stands in for the asset name
	"GET /media/{key}",          // so does it for the object key: never one, so always 404 before the store
	"GET /sitemaps/{file}",      // and for the sitemap file name: never articles-N.xml, so always 404 before the service
	"GET /feeds/authors/{file}", // and for a feed's file name: never NAME.atom, so always 404 before the service
	"GET /feeds/tags/{file}",
	"PUT /api/admin/users/{username}/role",
	"POST /api/moderation/articles/{slug}/hide",
	"POST /api/moderation/articles/{slug}/unhide",
	"POST /api/moderation/comments/{id}/hide",
	"POST /api/moderation/comments/{id}/unhide",
	"POST /api/moderation/users/{username}/suspend",
	"POST /api/moderation/users/{username}/unsuspend",
}

// plainSegment is a path value that cannot change which route the path matches.
var plainSegment = regexp.MustCompile(`^[A-Za-z0-9_~-]+$`)

func isPlainSegment(s string) bool { return plainSegment.MatchString(s) && s != "feed" && s != "hot" }

var pathSeeds = [][3]string{ // slug, id, username
	{"how-to-train-your-dragon", "3", "jake"},
	{"", "", ""},
	{"feed", "0", "feed"},
	{"hot", "-1", "hot"},
	{"a/b", "1/2", "a/b"},
	{"..", "..", ".."},
	{".", "%2F", "%2F"},
	{"ünïcödé-🐉", "９", "ünï"},
	{strings.Repeat("a", 2000), "9223372036854775807", strings.Repeat("b", 2000)},
	{"x", "9223372036854775808", "x"},
	{"\x00\r\n", " 1", "a b"},
	{"slug?x=1#frag", "1e3", "user;x"},
	{"*", "0x1F", ":username"},
	{"\xc0\xaf", "1", "\xed\xa0\x80"}, {`\ud800`, "\x00", "a\x00b"}, {oneMiB, "1", oneMiB[:4096]},
}

type pathInput struct {
	route  uint8
	mode   fuzzMode
	values [3]string // slug, id, username
}

// pathMatrix is every path seed on every path route, signed in, anonymous and with the services
// answering "not found".
func pathMatrix() []pathInput {
	var in []pathInput
	for i := range pathRoutes {
		for _, v := range pathSeeds {
			for _, mode := range []fuzzMode{outcomeRich, outcomeZero | modeAnonymous, fuzzMode(2)} {
				in = append(in, pathInput{uint8(i), mode, v})
			}
		}
	}
	return in
}

// pathCorpus is FuzzPathParams' seed corpus: the well-formed values on every route and each path
// seed once, spread over the routes.
func pathCorpus() []pathInput {
	var in []pathInput
	for i := range pathRoutes {
		in = append(in, pathInput{uint8(i), outcomeRich, pathSeeds[0]})
	}
	for j, v := range pathSeeds[1:] {
		in = append(in, pathInput{uint8(j % len(pathRoutes)), outcomeZero, v})
	}
	return in
}

// FuzzPathParams sends arbitrary slugs, ids and usernames to every operation with path
// parameters. Values that are single plain segments must keep to the operation's documented
// statuses; others (slashes, dots, "feed") may route elsewhere and only must not fail.
func FuzzPathParams(f *testing.F) {
	for _, in := range pathCorpus() {
		f.Add(in.route, uint16(in.mode), in.values[0], in.values[1], in.values[2])
	}
	f.Fuzz(checkPathParams)
}

func TestFuzzPathParamsSeedMatrix(t *testing.T) {
	t.Parallel()
	for _, in := range pathMatrix() {
		checkPathParams(t, in.route, uint16(in.mode), in.values[0], in.values[1], in.values[2])
	}
}

func checkPathParams(t *testing.T, route uint8, mode uint16, slug, id, username string) {
	key := pathRoutes[int(route)%len(pathRoutes)]
	method, template := splitKey(key)
	path := concretePath(template, map[string]string{"slug": slug, "id": id, "version": id, "username": username, "asset": slug, "key": slug, "file": slug})
	var body []byte
	if r, ok := bodyRouteFor(key); ok {
		body = []byte(r.good[0])
	}
	opKey := key
	for _, v := range []struct{ name, value string }{{"slug", slug}, {"id", id}, {"username", username}, {"asset", slug}, {"key", slug}, {"file", slug}} {
		if strings.Contains(template, "{"+v.name+"}") && !isPlainSegment(v.value) {
			opKey = ""
		}
	}
	m := fuzzMode(mode)
	rec := serveFuzz(t, m, method, path, "", body, nil)
	checkFuzzResponse(t, fmt.Sprintf("%s %q mode %#x", method, path, mode), rec, m, opKey)
}

// TestFuzzTablesCoverOpenAPI keeps the fuzz targets complete: every documented operation with a
// request body, a query parameter or a path parameter is fuzzed, and every query parameter the
// document names is one FuzzQueryParams sets.
func TestFuzzTablesCoverOpenAPI(t *testing.T) {
	t.Parallel()
	d := mustOpenAPI(t)
	var wantBody, wantQuery, wantPath []string
	for _, o := range d.ops() {
		if _, ok := o.Op["requestBody"]; ok {
			wantBody = append(wantBody, o.key())
		}
		if names := d.paramNames(o, "query"); len(names) > 0 {
			wantQuery = append(wantQuery, o.key())
			for _, n := range names {
				if !slices.Contains(fuzzedQueryNames, n) {
					t.Errorf("%s reads query parameter %q, which FuzzQueryParams does not set", o.key(), n)
				}
			}
		}
		if len(d.paramNames(o, "path")) > 0 {
			wantPath = append(wantPath, o.key())
		}
	}
	var gotBody []string
	for _, r := range bodyRoutes {
		gotBody = append(gotBody, r.key)
		if len(r.good) == 0 {
			t.Errorf("%s has no well-formed seed body", r.key)
		}
	}
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"bodyRoutes", gotBody, wantBody},
		{"queryRoutes", slices.Clone(queryRoutes), wantQuery},
		{"pathRoutes", slices.Clone(pathRoutes), wantPath},
	} {
		slices.Sort(c.got)
		slices.Sort(c.want)
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %v\nthe document has %v", c.name, c.got, c.want)
		}
	}
}

func truncate(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}
