// File: server/asio.h
//
// The one place that includes Boost.Asio, with the aliases the server uses. Boost 1.74's
// coroutine headers need <utility> first under GCC 12.
#pragma once

#include <utility>

#include <boost/asio.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace lapse::server {
namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;
}  // namespace lapse::server
