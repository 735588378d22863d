%% W6 peer "erlang-poolboy": checkout-pool transactions on poolboy
%% (Debian erlang-poolboy) under Erlang/OTP (erlang-nox). Spec: ../../README.md.
%% Started by build/bin/erlang-poolboy:
%%   erl -noshell +S N:N -pa <poolboy ebin> -pa build/erlang -run w6_peer main W6 C M K
%%
%% Members are poolboy workers (w6_member, a gen_server); the pool is
%% poolboy:start_link([{worker_module, w6_member}, {size, M}, {max_overflow, 0}]).
%% A consumer process does what poolboy:transaction/3 does, written out so that
%% the take can be timed: checkout(Pool, true, infinity), gen_server:call(W,
%% {work, V}, infinity), checkin(Pool, W). Every take's time (ns) goes into a
%% shared histogram (a `counters` array with write_concurrency); each consumer
%% keeps its own maximum.
%%
%% Env knobs (optional):
%%   W6_POOLBOY_STRATEGY=lifo|fifo   poolboy's strategy (default: poolboy's
%%                                   default, lifo)
%%
%% Exit status: 0 ok, 1 verification failed, 2 usage, 3 workload other than W6.
-module(w6_peer).
-export([main/0, main/1]).

%% Histogram of take times in ns: values below 128 exact; above, each power of
%% two split into 64 linear sub-buckets (a bucket is at most 1/64 of its lower
%% edge wide). Bucket of V: shift S = max(0, bitlen(V) - 7), B = S*64 + (V bsr S).
-define(HIST_SUB, 64).
-define(HIST_MAX_NS, ((1 bsl 44) - 1)).                % clamp (~4.9 hours)
-define(HIST_SIZE, ((44 - 6 + 1) * ?HIST_SUB)).        % buckets 0..HIST_SIZE-1

main(["W6", C, M, K]) ->
    Rc = case {pos_int(C), pos_int(M), pos_int(K)} of
             {Ci, Mi, Ki} when is_integer(Ci), is_integer(Mi), is_integer(Ki) ->
                 try w6(Ci, Mi, Ki)
                 catch Cl:E:St ->
                         io:format(standard_error, "error: ~p:~p~n~p~n", [Cl, E, St]),
                         1
                 end;
             _ -> usage()
         end,
    halt(Rc);
main(["W6" | _]) -> halt(usage());
main([WL | _]) ->
    io:format(standard_error, "erlang-poolboy: workload ~s not supported (W6 only)~n", [WL]),
    halt(3);
main(_) -> halt(usage()).

main() -> halt(usage()).

usage() ->
    io:format(standard_error,
              "usage: erlang-poolboy W6 C M K   (C consumers, M members, "
              "K transactions per consumer; all >= 1)~n", []),
    2.

pos_int(S) ->
    try list_to_integer(S) of
        N when N > 0 -> N;
        _ -> bad
    catch _:_ -> bad
    end.

now_ns() -> erlang:monotonic_time(nanosecond).

proc_status_kb(Key) ->
    {ok, Bin} = file:read_file("/proc/" ++ os:getpid() ++ "/status"),
    find_kb(string:split(binary_to_list(Bin), "\n", all), Key ++ ":").

find_kb([], _) -> -1;
find_kb([Line | Rest], Key) ->
    case lists:prefix(Key, Line) of
        true ->
            [Num | _] = string:lexemes(lists:nthtail(length(Key), Line), " \t"),
            list_to_integer(Num);
        false -> find_kb(Rest, Key)
    end.

strategy() ->
    case os:getenv("W6_POOLBOY_STRATEGY") of
        "fifo" -> fifo;
        _ -> lifo
    end.

%% ---------------------------------------------------------------------------
w6(C, M, K) ->
    Strategy = strategy(),
    {ok, Pool} = poolboy:start_link([{worker_module, w6_member}, {size, M},
                                     {max_overflow, 0}, {strategy, Strategy}], []),
    Hist = counters:new(?HIST_SIZE, [write_concurrency]),
    Main = self(),
    Consumers = [spawn_link(fun() ->
                                    receive go -> ok end,
                                    consume(Pool, Hist, J * K, (J + 1) * K, 0, 0, 0, Main)
                            end) || J <- lists:seq(0, C - 1)],
    T0 = now_ns(),
    [P ! go || P <- Consumers],
    {Count, Check, MaxNs} = collect(C, 0, 0, 0),
    T1 = now_ns(),
    TFirst = receive {first_report, T} -> T end,
    Secs = (T1 - T0) / 1.0e9,

    %% Untimed: read every member's state through poolboy's supervisor list.
    Workers = [W || {_, W, worker, _} <- gen_server:call(Pool, get_all_workers)],
    Stats = [gen_server:call(W, stats) || W <- Workers],
    Uses = [U || {U, _} <- Stats],
    MemberAcc = lists:foldl(fun({_, A}, X) -> X bxor A end, 0, Stats),
    Counts = [counters:get(Hist, I) || I <- lists:seq(1, ?HIST_SIZE)],
    Takes = lists:sum(Counts),

    Rate = case Secs > 0 of true -> round(Count / Secs); false -> 0 end,
    io:format("RESULT workload=W6 impl=erlang-poolboy params=C=~b,M=~b,K=~b msgs=~b "
              "secs=~.4f rate=~b rss_kb=~b check=~b p99_take_us=~.2f "
              "member_uses_min=~b member_uses_max=~b pool=poolboy "
              "p50_take_us=~.2f max_take_us=~.2f takes_timed=~b take_hist=log2/64 "
              "first_report_secs=~.4f strategy=~s schedulers=~b~n",
              [C, M, K, Count, Secs, Rate, proc_status_kb("VmHWM"), Check,
               percentile(Counts, Takes, MaxNs, 99) / 1000,
               lists:min(Uses), lists:max(Uses),
               percentile(Counts, Takes, MaxNs, 50) / 1000, MaxNs / 1000,
               Takes, (TFirst - T0) / 1.0e9, Strategy,
               erlang:system_info(schedulers_online)]),
    Want = C * K,
    Errors = [io_lib:format("consumer count ~b != ~b", [Count, Want]) || Count =/= Want]
        ++ [io_lib:format("member uses ~b != ~b", [lists:sum(Uses), Want])
            || lists:sum(Uses) =/= Want]
        ++ [io_lib:format("timed takes ~b != ~b", [Takes, Want]) || Takes =/= Want]
        ++ [io_lib:format("members ~b != ~b", [length(Workers), M]) || length(Workers) =/= M]
        ++ [io_lib:format("xor of member accs ~b != check ~b", [MemberAcc, Check])
            || MemberAcc =/= Check],
    [io:format(standard_error, "erlang-poolboy: ~s~n", [E]) || E <- Errors],
    case Errors of [] -> 0; _ -> 1 end.

%% One consumer: transactions V = From .. To-1, then report to Main.
consume(_Pool, _Hist, V, To, Count, Acc, MaxNs, Main) when V >= To ->
    Main ! {report, Count, Acc, MaxNs};
consume(Pool, Hist, V, To, Count, Acc, MaxNs, Main) ->
    Ta = now_ns(),
    W = poolboy:checkout(Pool, true, infinity),
    Take = now_ns() - Ta,
    counters:add(Hist, bucket(Take) + 1, 1),
    R = gen_server:call(W, {work, V}, infinity),
    ok = poolboy:checkin(Pool, W),
    consume(Pool, Hist, V + 1, To, Count + 1, Acc bxor R, max(MaxNs, Take), Main).

%% Main collects the C reports; the time of the first one goes to its own
%% mailbox as {first_report, Ns} (read after t1).
collect(0, Count, Check, MaxNs) -> {Count, Check, MaxNs};
collect(N, Count, Check, MaxNs) ->
    receive
        {report, C1, A1, M1} ->
            case Count of 0 -> self() ! {first_report, now_ns()}; _ -> ok end,
            collect(N - 1, Count + C1, Check bxor A1, max(MaxNs, M1))
    end.

%% ---------------------------------------------------------------------------
%% histogram helpers

bucket(V) when V < 0 -> 0;
bucket(V) when V > ?HIST_MAX_NS -> bucket(?HIST_MAX_NS);
bucket(V) -> bucket(V, 0).

bucket(V, S) when V >= 2 * ?HIST_SUB -> bucket(V bsr 1, S + 1);
bucket(V, S) -> S * ?HIST_SUB + V.

%% Largest value in bucket B (0-based).
upper(B) when B < 2 * ?HIST_SUB -> B;
upper(B) ->
    S = B div ?HIST_SUB - 1,
    Mant = B rem ?HIST_SUB + ?HIST_SUB,
    ((Mant + 1) bsl S) - 1.

%% Nearest rank: upper edge of the bucket holding sample ceil(P*N/100),
%% capped at the exact maximum.
percentile(_Counts, 0, _MaxNs, _P) -> 0;
percentile(Counts, N, MaxNs, P) ->
    Rank = (N * P + 99) div 100,
    min(rank_upper(Counts, 0, 0, Rank), MaxNs).

rank_upper([], _B, _Seen, _Rank) -> 0;
rank_upper([C | Rest], B, Seen, Rank) ->
    case Seen + C >= Rank of
        true -> upper(B);
        false -> rank_upper(Rest, B + 1, Seen + C, Rank)
    end.
