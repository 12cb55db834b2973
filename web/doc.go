// Package web is inkwell's HTTP adapter: gin handlers, request and response bodies in the RealWorld
// shapes, middlewares, and the one function (writeError) that turns domain errors into HTTP. It
// declares the service interfaces each handler calls at the top of the handler's file, so handlers
// can be tested against gomock.
package web
