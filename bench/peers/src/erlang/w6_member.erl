%% W6 pool member for the erlang-poolboy peer: a poolboy worker (gen_server).
%% State {Uses, Acc}. {work, V} -> reply xs50(V), Uses + 1, Acc bxor xs50(V).
%% stats -> {Uses, Acc} (read by w6_peer after the timed interval).
-module(w6_member).
-behaviour(gen_server).
-behaviour(poolboy_worker).

-export([start_link/1, xs50/1]).
-export([init/1, handle_call/3, handle_cast/2]).

-define(MASK, 16#FFFFFFFF).

start_link(Args) -> gen_server:start_link(?MODULE, Args, []).

init(_Args) -> {ok, {0, 0}}.

handle_call({work, V}, _From, {Uses, Acc}) ->
    R = xs50(V),
    {reply, R, {Uses + 1, Acc bxor R}};
handle_call(stats, _From, State) ->
    {reply, State, State}.

handle_cast(_Msg, State) -> {noreply, State}.

%% The harness's per-message work: 50 rounds of xorshift32 (13,17,5) seeded
%% with (V + 1) mod 2^32.
xs50(V) -> xs((V + 1) band ?MASK, 50).

xs(S, 0) -> S;
xs(S0, K) ->
    S1 = S0 bxor ((S0 bsl 13) band ?MASK),
    S2 = S1 bxor (S1 bsr 17),
    S3 = S2 bxor ((S2 bsl 5) band ?MASK),
    xs(S3, K - 1).
