/* shoal/shoal.h - the whole public surface in one include. */
#ifndef SHOAL_SHOAL_H
#define SHOAL_SHOAL_H

#include "shoal/behaviour.h"
#include "shoal/checkout.h"
#include "shoal/ctx.h"
#include "shoal/error.h"
#include "shoal/inspect.h"
#include "shoal/message.h"
#include "shoal/pool.h"
#include "shoal/pull.h"
#include "shoal/runtime.h"
#include "shoal/tasks.h"
#include "shoal/types.h"

#endif
