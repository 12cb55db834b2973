package web

import "github.com/google/wire"

// ProviderSet builds the handlers and the router.
var ProviderSet = wire.NewSet(NewAuthenticator, NewUserHandler, NewProfileHandler, NewBlockHandler, NewArticleHandler, NewRevisionHandler, NewArticleScheduleHandler,
	NewCommentHandler, NewCollectionHandler, NewHotHandler, NewNotificationHandler,
	NewCodeLoginHandler, NewAccountHandler, NewSessionHandler, NewSearchHandler, NewIdempotency,
	NewPeopleSearchHandler, NewTagSearchHandler, NewModerationHandler, NewReportHandler, NewUploadHandler, NewMediaHandler, NewSitemapHandler, NewSignInHandler, NewFeedHandler, NewWebhookHandler, NewDrain, wire.Struct(new(Handlers), "*"), NewRouter)
